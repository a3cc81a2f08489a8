/**
 * Loading a user's algorithm file (cclab verify --algorithm-file ./my_allreduce.ts): every
 * export that looks like an Algorithm is registered, with its file recorded so headers, explain
 * and error messages point at it. The file is TypeScript run through tsx, like the built-ins, or
 * an MSCCL XML program (algo.xml, src/msccl/import.ts), which becomes one algorithm named after
 * the file. A TypeScript algorithm's schedule() is bounded in time and size (a call that never
 * returns, or builds millions of operations, is an error naming the file, the algorithm, the
 * call and the bound: src/runtime/user-schedule.ts).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { InvalidArgumentError } from "../core/errors.js";
import { suggest } from "../core/suggest.js";
import { importMsccl } from "../msccl/import.js";
import { readMscclFile } from "../msccl/parse.js";
import { importUserModule } from "../runtime/user-module.js";
import { boundedAlgorithm } from "../runtime/user-schedule.js";
import type { Algorithm } from "../schedule/dsl.js";
import { allAlgorithms, registerAlgorithm } from "../schedule/registry.js";
import { specOf } from "../specs/index.js";

function isAlgorithm(x: unknown): x is Algorithm {
  return (
    typeof x === "object" &&
    x !== null &&
    typeof (x as Algorithm).collective === "string" &&
    typeof (x as Algorithm).name === "string" &&
    typeof (x as Algorithm).schedule === "function"
  );
}

export async function loadAlgorithmFile(path: string): Promise<Algorithm[]> {
  const file = resolve(path);
  if (!existsSync(file)) {
    throw new InvalidArgumentError({ op: "loadAlgorithmFile", arg: "--algorithm-file" }, `no such file: ${file}`);
  }
  if (/\.xml$/i.test(file)) {
    const { algorithm } = importMsccl(readMscclFile(file), { file });
    registerAlgorithm(algorithm);
    return [algorithm];
  }
  const mod = await importUserModule(file);
  const found = Object.entries(mod).filter((e): e is [string, Algorithm] => isAlgorithm(e[1]));
  if (found.length === 0) {
    throw new InvalidArgumentError(
      { op: "loadAlgorithmFile", arg: "--algorithm-file" },
      `${file} exports no algorithm (defineAlgorithm({ collective, name, summary, limits, source, cost, schedule }), as in algorithms/)`,
    );
  }
  const out: Algorithm[] = [];
  for (const [exportName, alg] of found) {
    // Its schedule() bounded in time and size (a worker rehearses each call first: user-schedule.ts).
    const withFile = boundedAlgorithm({ ...alg, file }, file, exportName);
    registerAlgorithm(withFile);
    out.push(withFile);
  }
  return out;
}

/** The algorithms a verify/bench/trace/explain invocation is about. */
export async function selectAlgorithms(o: { collective?: string; algorithm?: string; algorithmFile?: string }) {
  const loaded = o.algorithmFile ? await loadAlgorithmFile(o.algorithmFile) : undefined;
  const collective =
    o.collective === undefined ? undefined : specOf(o.collective, { op: "cclab", arg: "--collective" }).name;
  const pool = loaded ?? allAlgorithms();
  const chosen = pool.filter(
    (a) => (!collective || a.collective === collective) && (!o.algorithm || a.name === o.algorithm),
  );
  if (chosen.length === 0) {
    const names = [...new Set(pool.filter((a) => !collective || a.collective === collective).map((a) => a.name))];
    const hint = o.algorithm ? suggest(o.algorithm, names) : undefined;
    throw new InvalidArgumentError(
      { op: "cclab", arg: "--algorithm" },
      `no ${collective ? `${collective} ` : ""}algorithm${o.algorithm ? ` named '${o.algorithm}'` : ""}${hint ? `; did you mean '${hint}'?` : ""}; ` +
        `there are: ${names.join(", ") || "none"} (cclab list shows them all)`,
    );
  }
  return chosen;
}
