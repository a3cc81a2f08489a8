/**
 * The layers of cclab, lowest first, and the rule that holds them: a module may import only from
 * its own layer or a lower one; and no import cycle, static or dynamic (`await import()`), type
 * imports included. dependency-cruiser checks every import of src/ and algorithms/ against both
 * (test/layers.test.ts, in npm test); `npx tsx src/tools/layers.ts` prints violations.
 *
 *   core         src/core                    dtypes, ops, buffers, errors, the matcher
 *   comm         src/comm.ts, layer, checks  the point-to-point interface, the KV store interface
 *   schedule     src/specs, src/schedule,    what a collective is; the DSL, plans, the one
 *                algorithms                  interpreter, check/explain/model; the algorithms
 *   backends     src/sim, src/backends,      sim, mpi, nccl (and the native addon's loader)
 *                src/native
 *   collectives  src/collectives             the front API, 'auto', the oracle
 *   tools        src/verify, bench, model,   verification drivers, bench, sweeps, pictures,
 *                viz, runtime, tools, msccl,  the launcher and runtime, MSCCL import/export,
 *                export                       GOAL and Chakra export
 *   cli          src/cli, src/index.ts       the command line and the package's entry
 */
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";

export const LAYERS: readonly { readonly name: string; readonly paths: readonly string[] }[] = [
  { name: "core", paths: ["^src/core/"] },
  { name: "comm", paths: ["^src/(comm|layer|checks|nonmember|kvstore|trace)\\.ts$"] },
  { name: "schedule", paths: ["^src/specs/", "^src/schedule/", "^algorithms/"] },
  { name: "backends", paths: ["^src/sim/", "^src/backends/", "^src/native/"] },
  { name: "collectives", paths: ["^src/collectives/"] },
  {
    name: "tools",
    paths: ["^src/(verify|bench|model|viz|runtime|tools|msccl|playground|export)/", "^src/tracing\\.ts$"],
  },
  { name: "cli", paths: ["^src/cli/", "^src/index\\.ts$"] },
];

/** One forbidden rule per layer: nothing in it may import from any layer above. */
export function layerRules(): IForbiddenRuleType[] {
  return LAYERS.slice(0, -1).map((layer, i) => ({
    name: `no-upward-import-from-${layer.name}`,
    comment: `${layer.name} may import only from ${LAYERS.slice(0, i + 1)
      .map((l) => l.name)
      .join(", ")}`,
    severity: "error",
    from: { path: layer.paths.join("|") },
    to: {
      path: LAYERS.slice(i + 1)
        .flatMap((l) => l.paths)
        .join("|"),
    },
  }));
}

/** Every file under src/ and algorithms/ must belong to a layer. */
const unlayered: IForbiddenRuleType = {
  name: "every-module-in-a-layer",
  severity: "error",
  from: { path: "^(src|algorithms)/", pathNot: LAYERS.flatMap((l) => l.paths).join("|") },
  to: {},
};

/** No module may reach itself through its imports (dependency-cruiser's no-circular). */
const noCircular: IForbiddenRuleType = {
  name: "no-circular",
  comment: "an import cycle: move what both sides need where both can import it",
  severity: "error",
  from: { path: "^(src|algorithms)/" },
  to: { circular: true },
};

export interface LayerViolation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
  /** no-circular: the way back from `to` to `from`, as dependency-cruiser found it. */
  readonly cycle?: readonly string[];
}

/** A cycle as one line, 'a -> b -> c', starting from its least module name (the same cycle reads the same from any member). */
export function cycleText(v: LayerViolation): string {
  const ring = [v.from, ...(v.cycle ?? []).slice(0, -1)];
  const start = ring.indexOf([...ring].sort()[0] as string);
  return [...ring.slice(start), ...ring.slice(0, start)].join(" -> ");
}

/** The distinct import cycles among violations, as cycleText lines, sorted. */
export function cyclesOf(violations: readonly LayerViolation[]): string[] {
  return [...new Set(violations.filter((v) => v.rule === "no-circular").map(cycleText))].sort();
}

/** The imports that break the layering, among the modules reachable from `roots` (default: src and algorithms). */
export async function layerViolations(roots: readonly string[] = ["src", "algorithms"]): Promise<LayerViolation[]> {
  const result = await cruise([...roots], {
    validate: true,
    ruleSet: { forbidden: [...layerRules(), unlayered, noCircular] },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules|^test/" },
  });
  if (typeof result.output === "string") throw new Error("dependency-cruiser returned text, not a result");
  return result.output.summary.violations.map((v) => ({
    rule: v.rule.name,
    from: v.from,
    to: v.to,
    ...(v.cycle ? { cycle: v.cycle.map((c) => (typeof c === "string" ? c : c.name)) } : {}),
  }));
}

if (process.argv[1]?.endsWith("tools/layers.ts")) {
  const found = await layerViolations(process.argv.slice(2).length ? process.argv.slice(2) : undefined);
  const upward = found.filter((v) => v.rule !== "no-circular");
  for (const v of upward) console.error(`${v.rule}: ${v.from} imports ${v.to}`);
  const cycles = cyclesOf(found);
  for (const c of cycles) console.error(`no-circular: ${c}`);
  console.log(
    upward.length === 0 && cycles.length === 0
      ? "layers hold, no import cycles"
      : `${upward.length} upward imports, ${cycles.length} import cycles`,
  );
  process.exitCode = upward.length === 0 && cycles.length === 0 ? 0 : 1;
}
