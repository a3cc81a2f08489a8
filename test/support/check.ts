/**
 * Assertions for test programs that run outside vitest (MPI fixtures under mpirun, the GPU
 * checks on the device machine): a failed check throws, and the program's exit says so.
 */
export function check(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

/** p must reject with an instance of cls whose message matches re; `what` names the case. */
export async function expectReject(
  p: Promise<unknown>,
  cls: new (...a: never[]) => Error,
  re: RegExp,
  what: string,
): Promise<void> {
  try {
    await p;
  } catch (e) {
    check(e instanceof cls, `${what}: expected ${cls.name}, got ${String(e)}`);
    check(
      re.test((e as Error).message),
      `${what}: message ${JSON.stringify((e as Error).message)} does not match ${re}`,
    );
    return;
  }
  throw new Error(`${what}: did not throw`);
}

/**
 * Runs an MPI fixture's cases in order on `comm`, a barrier after each: first 'cases rank/size
 * ["name", ...]' (the list), then 'ok rank/size name' per case, 'FAIL ...' and exit 1 on the
 * first that throws, 'done rank/size' at the end. test/mpi.test.ts holds the output to the list
 * (okLines below), so adding a case needs no count changed anywhere.
 */
export async function runCases<C extends { readonly rank: number; readonly size: number }>(
  comm: C & { readonly builtin: { barrier(): void } },
  cases: readonly (readonly [string, (c: C) => Promise<void>])[],
): Promise<void> {
  console.log(`cases ${comm.rank}/${comm.size} ${JSON.stringify(cases.map(([name]) => name))}`);
  for (const [name, fn] of cases) {
    try {
      await fn(comm);
      comm.builtin.barrier();
      console.log(`ok ${comm.rank}/${comm.size} ${name}`);
    } catch (e) {
      console.log(`FAIL ${comm.rank}/${comm.size} ${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(1);
    }
  }
  console.log(`done ${comm.rank}/${comm.size}`);
}

/**
 * For a runCases job's output on `size` ranks: the case names each rank announced, and the
 * 'ok' lines every rank owes (one per rank and case) that are missing. Throws if a rank
 * announced no list, or ranks announced different lists.
 */
export function missingOks(output: string, size: number): { cases: string[]; missing: string[] } {
  const lists = Array.from({ length: size }, (_, rank) => {
    const line = output.split("\n").find((l) => l.startsWith(`cases ${rank}/${size} `));
    if (!line) throw new Error(`rank ${rank}/${size} announced no cases`);
    return JSON.parse(line.slice(`cases ${rank}/${size} `.length)) as string[];
  });
  const cases = lists[0] as string[];
  for (const [rank, l] of lists.entries()) {
    if (JSON.stringify(l) !== JSON.stringify(cases))
      throw new Error(`rank ${rank} announced other cases: ${l.join(", ")}`);
  }
  const lines = new Set(output.split("\n"));
  const missing = lists
    .flatMap((l, rank) => l.map((name) => `ok ${rank}/${size} ${name}`))
    .filter((x) => !lines.has(x));
  return { cases, missing };
}
