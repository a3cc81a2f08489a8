/**
 * What an export/import round trip must keep, and the check of it. Two schedules of a call are
 * taken as equal when both pass the checker (so both compute the collective) and, at the
 * exported call, they send the same messages: between each pair of ranks on each channel, the
 * same number of messages in the same order, each carrying the same contributions (walked
 * symbolically, so a message that carries rank 2's element 5 reduced with rank 3's must do so in
 * both). Step counts are not compared: the import groups MSCCL's threadblocks into rounds of its
 * own (import.ts), and local copies may differ (a three-operand reduce is exported as a copy
 * and a reduce).
 */
import { compileAll, strideOf } from "../schedule/check.js";
import type { Algorithm } from "../schedule/dsl.js";
import { interpret } from "../schedule/interpret.js";
import { flatten, SymbolicMemory } from "../schedule/symbolic.js";
import type { CollectiveCall } from "../specs/types.js";

/** Per 'src>dst@channel', the contributions of each message in order ('0:3+1:3' = rank 0's and rank 1's element 3). */
export function messagesOf(alg: Algorithm, call: CollectiveCall): Map<string, string[]> {
  const plans = compileAll(alg, call);
  const stride = strideOf(plans);
  const sym = new SymbolicMemory(plans, stride, { fail: () => {} });
  const inner = sym.effects("steps");
  const out = new Map<string, string[]>();
  const cell = (ids: readonly number[] | null) =>
    ids === null
      ? "."
      : [...ids]
          .sort((a, b) => a - b)
          .map((id) => `${Math.floor(id / stride)}:${id % stride}`)
          .join("+");
  const outcome = interpret(
    plans,
    {
      ...inner,
      transfer: (s, r, start) => {
        const k = `${s.rank}>${r.rank}@${s.op.channel}`;
        const cells = sym.read(s.rank, s.op.region).map((c) => cell(flatten(c)));
        let l = out.get(k);
        if (!l) out.set(k, (l = []));
        l.push(cells.join(" "));
        return inner.transfer?.(s, r, start);
      },
    },
    "steps",
  );
  if (!outcome.complete) throw new Error(`${alg.collective}/${alg.name}: the walk did not complete`);
  return out;
}

/** The first difference between two schedules' messages at a call, or undefined where they agree. */
export function differentMessages(a: Algorithm, b: Algorithm, call: CollectiveCall): string | undefined {
  const x = messagesOf(a, call);
  const y = messagesOf(b, call);
  for (const k of new Set([...x.keys(), ...y.keys()])) {
    const p = x.get(k) ?? [];
    const q = y.get(k) ?? [];
    const [src, rest] = k.split(">");
    const [dst, ch] = (rest ?? "").split("@");
    const where = `rank ${src} to rank ${dst} on channel ${ch}`;
    if (p.length !== q.length) return `${where}: ${a.name} sends ${p.length} messages, ${b.name} ${q.length}`;
    const i = p.findIndex((m, j) => m !== q[j]);
    if (i >= 0) return `${where}, message ${i}: ${a.name} carries [${p[i]}], ${b.name} [${q[i]}]`;
  }
  return undefined;
}
