/**
 * Deadlines of any length. Node clamps a setTimeout delay above 2^31-1 ms (24.8 days) to 1 ms, so a
 * timeout of `--timeout 3000000` (35 days) would fire at once; `deadline` re-arms in steps below
 * that limit instead, and an infinite delay sets no timer at all. Timeouts are checked once, here:
 * `checkTimeoutMs` is what every public timeout argument goes through.
 */
import { InvalidArgumentError } from "./errors.js";

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls fn once after ms (any length; Infinity: never); returns a canceller. `ref: false`: the timer does not hold the process open. */
export function deadline(ms: number, fn: () => void, options: { ref?: boolean } = {}): () => void {
  if (!(ms < Number.POSITIVE_INFINITY)) return () => {};
  const end = Date.now() + Math.max(0, ms);
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = end - Date.now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : fn, Math.min(Math.max(0, left), MAX_TIMER_MS));
    if (options.ref === false) timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * A timeout argument in ms: a positive finite number. Infinity is refused on purpose (nothing in
 * cclab may wait forever silently); `what` names the flag or variable for the message.
 */
export function checkTimeoutMs(ms: unknown, site: { rank?: number; op: string; arg: string }): number {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) {
    throw new InvalidArgumentError(
      site,
      `must be a positive, finite number of milliseconds, got ${typeof ms === "number" ? ms : JSON.stringify(ms)}` +
        (ms === Number.POSITIVE_INFINITY ? " (there is no 'wait forever': give a long finite timeout instead)" : ""),
    );
  }
  return ms;
}

/** A duration for messages: '2 s', '0.2 s', '0.000001 s', '35 days'. */
export function formatDuration(ms: number): string {
  if (ms >= 2 * 86_400_000) return `${+(ms / 86_400_000).toFixed(1)} days`;
  // Under a millisecond, three significant digits: a timeout of 1 µs is not '0 s'.
  if (ms > 0 && ms < 1) return `${+(ms / 1000).toPrecision(3)} s`;
  return `${+(ms / 1000).toFixed(3)} s`;
}
