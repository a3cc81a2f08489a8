/**
 * `cclab list`: what this installation has: the collectives (with torch's names), their
 * algorithms, the backends and whether each can run on this machine (and if not, why and how to
 * get it), and the native addon.
 */
import { spawnSync } from "node:child_process";
import type { Command } from "commander";
import { loadNative } from "../native/load.js";
import type { NativeEngines } from "../native/types.js";
import { outsideDomain } from "../schedule/dsl.js";
import { algorithmsOf } from "../schedule/registry.js";
import { SPECS } from "../specs/index.js";
import { jsonOption, nranksOption, parsers, printJson, TOOL_MAX_RANKS } from "./options.js";

export interface BackendStatus {
  readonly name: string;
  readonly what: string;
  readonly available: boolean;
  readonly reason?: string;
  readonly hint?: string;
}

export interface ListReport {
  readonly version: string;
  readonly native: {
    readonly loaded: boolean;
    readonly path?: string;
    readonly engines?: string[];
    readonly reason?: string;
  };
  readonly collectives: readonly {
    readonly name: string;
    readonly torch: string;
    readonly api: string;
    readonly aliases: readonly string[];
    readonly algorithms: readonly { readonly name: string; readonly summary: string }[];
  }[];
  readonly backends: readonly BackendStatus[];
}

async function backends(): Promise<BackendStatus[]> {
  const out: BackendStatus[] = [
    { name: "sim", what: "in-process simulator (deterministic, finds deadlocks)", available: true },
  ];
  const { mpiAvailable, MPI_HINT } = await import("../backends/mpi/index.js");
  const mpi = mpiAvailable();
  const mpirun = spawnSync("mpirun", ["--version"], { stdio: "ignore" }).status === 0;
  out.push({
    name: "mpi",
    what: "one process per rank over MPI's point-to-point calls",
    available: mpi.ok && mpirun,
    ...(!mpi.ok
      ? { reason: mpi.reason, hint: mpi.hint }
      : !mpirun
        ? { reason: "mpirun is not on PATH", hint: MPI_HINT }
        : {}),
  });
  try {
    const { ncclAvailable } = await import("../backends/nccl/index.js");
    const nccl = ncclAvailable();
    out.push({
      name: "nccl",
      what: "one process per GPU over NCCL's point-to-point calls",
      available: nccl.ok,
      ...(nccl.ok ? {} : { reason: nccl.reason, hint: nccl.hint }),
    });
  } catch (e) {
    out.push({ name: "nccl", what: "one process per GPU", available: false, reason: (e as Error).message });
  }
  return out;
}

function engineNames(e: NativeEngines): string[] {
  const out = ["host reductions"];
  if (e.mpi) out.push(`mpi${e.mpiVersion ? ` (${e.mpiVersion.split("\n")[0]?.trim()})` : ""}`);
  if (e.cuda) out.push("cuda");
  if (e.nccl) out.push(`nccl ${e.ncclVersion ?? ""}`.trim());
  return out;
}

/** With `nranks`, only the algorithms written for that many ranks (an MSCCL program's, say, for 8). */
export async function listReport(version: string, nranks?: number): Promise<ListReport> {
  const l = loadNative();
  return {
    version,
    native: l.ok
      ? { loaded: true, path: l.path, engines: engineNames(l.addon.engines()) }
      : { loaded: false, reason: l.reason.split("\n")[0] },
    collectives: SPECS.map((s) => ({
      name: s.name,
      torch: s.aliases.find((a) => a.includes("_")) ?? s.name,
      api: s.api,
      aliases: s.aliases,
      algorithms: algorithmsOf(s.name)
        .filter(
          (a) => nranks === undefined || !outsideDomain(a, { size: nranks, count: 0, root: 0 })?.startsWith("n = "),
        )
        .map((a) => ({ name: a.name, summary: a.summary })),
    })),
    backends: await backends(),
  };
}

function print(r: ListReport): void {
  console.log(`cclab ${r.version}`);
  console.log(
    r.native.loaded
      ? `native addon: ${r.native.path} (${r.native.engines?.join(", ")})`
      : `native addon: not loaded (${r.native.reason}); pure TypeScript paths in use`,
  );
  console.log("\ncollectives (cclab name, torch's name, API function) and their algorithms:");
  for (const c of r.collectives) {
    console.log(`  ${c.name.padEnd(14)} ${c.torch.padEnd(16)} ${c.api}`);
    for (const a of c.algorithms) console.log(`      ${a.name.padEnd(24)} ${a.summary}`);
  }
  console.log("\nbackends:");
  for (const b of r.backends) {
    console.log(`  ${b.name.padEnd(5)} ${b.available ? "available    " : "unavailable  "} ${b.what}`);
    if (!b.available) {
      for (const line of (b.reason ?? "").split("\n")) if (line) console.log(`        why: ${line}`);
      for (const line of (b.hint ?? "").split("\n")) if (line) console.log(`        to get it: ${line}`);
    }
  }
}

export function registerList(program: Command, version: string): void {
  program
    .command("list")
    .description("the collectives (with torch's names), their algorithms, and the backends this machine can run")
    .addOption(
      nranksOption("only the algorithms that run on this many ranks", parsers("list").int("-n", 1, TOOL_MAX_RANKS)),
    )
    .addOption(jsonOption())
    .action(async (o: { nranks?: number; json?: boolean }) => {
      const r = await listReport(version, o.nranks);
      if (o.json) printJson(r);
      else print(r);
    });
}
