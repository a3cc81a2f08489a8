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
 * Runs an MPI fixture's cases in order on `comm`, a barrier after each: 'ok rank/size name' per
 * case, 'FAIL ...' and exit 1 on the first that throws, 'done rank/size' at the end (what
 * test/mpi.test.ts counts).
 */
export async function runCases<C extends { readonly rank: number; readonly size: number }>(
  comm: C & { readonly builtin: { barrier(): void } },
  cases: readonly (readonly [string, (c: C) => Promise<void>])[],
): Promise<void> {
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
