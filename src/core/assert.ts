/** The one helper for internal invariants: a failure here is a bug in cclab or in an algorithm, not in user input. */
export function invariant(cond: unknown, message: string | (() => string)): asserts cond {
  if (!cond) {
    throw new Error(`cclab internal invariant failed: ${typeof message === "function" ? message() : message}`);
  }
}
