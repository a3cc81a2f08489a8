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
