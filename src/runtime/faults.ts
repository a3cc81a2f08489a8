/**
 * Fault injection, for teaching and tests: kill a rank at its k-th operation, delay a rank, or
 * change one rank's count, as a Comm wrapper so it works on every backend. Specs come from
 * `cclab run --fault kill:rank=2,at=3` (repeatable) or CCLAB_FAULT (';'-separated), e.g.
 *   kill:rank=2,at=3     rank 2 dies at its 3rd point-to-point call (sim: it throws;
 *                        processes: SIGKILL to itself, no cleanup, as a crash)
 *   delay:rank=1,ms=500  rank 1 sleeps 500 ms before each call (or only its at-th, with at=k)
 *   count:rank=3,delta=1 rank 3 acts as if called with count+1 (the front API asks countDelta;
 *                        on the wire, each of its transfers is off by delta, or only the at-th)
 * An operation is one call of send, recv, isend, irecv or group, counted from 1 per process.
 * A fault that names a rank outside the job is refused at launch; one that never fired by the end
 * of its rank's run fails that rank, saying so (an experiment that did not happen is not a pass).
 */

import type { CollectiveEvent, Comm, OpOptions, P2POp, Work } from "../comm.js";
import { view as makeView, type View } from "../core/buffer.js";
import { CclabError, InvalidArgumentError } from "../core/errors.js";
import { deadline } from "../core/timer.js";
import { CommLayer, findLayer } from "../layer.js";

export type Fault =
  | { readonly kind: "kill"; readonly rank: number; readonly at: number }
  | { readonly kind: "delay"; readonly rank: number; readonly ms: number; readonly at?: number }
  | { readonly kind: "count"; readonly rank: number; readonly delta: number; readonly at?: number };

/** The error a killed sim rank throws (processes die instead). */
export class InjectedFault extends CclabError {
  override name = "InjectedFault";
}

const KEYS: Record<Fault["kind"], { need: string[]; allow: string[] }> = {
  kill: { need: ["rank", "at"], allow: [] },
  delay: { need: ["rank", "ms"], allow: ["at"] },
  count: { need: ["rank", "delta"], allow: ["at"] },
};

/** Parses one or more specs ('kill:rank=2,at=3;delay:rank=1,ms=500'); exact errors for the CLI. */
export function parseFaults(specs: string | readonly string[]): Fault[] {
  const list = (typeof specs === "string" ? [specs] : specs).flatMap((s) => s.split(";"));
  const out: Fault[] = [];
  for (const raw of list) {
    const spec = raw.trim();
    if (spec === "") continue;
    const bad = (detail: string) =>
      new InvalidArgumentError({ op: "fault", arg: "spec" }, `${JSON.stringify(spec)}: ${detail}`);
    const colon = spec.indexOf(":");
    const kind = (colon < 0 ? spec : spec.slice(0, colon)) as Fault["kind"];
    const shape = KEYS[kind];
    if (!shape) throw bad(`unknown fault '${kind}'; expected kill, delay or count`);
    const fields = new Map<string, number>();
    for (const kv of (colon < 0 ? "" : spec.slice(colon + 1)).split(",").filter((x) => x !== "")) {
      const [k, v, ...rest] = kv.split("=");
      if (!k || v === undefined || rest.length) throw bad(`'${kv}' is not key=value`);
      if (![...shape.need, ...shape.allow].includes(k))
        throw bad(`${kind} takes ${[...shape.need, ...shape.allow].join(", ")}, not '${k}'`);
      const n = /^-?\d{1,15}$/.test(v) ? Number(v) : Number.NaN;
      if (!Number.isSafeInteger(n)) throw bad(`${k} must be a decimal integer, got '${v}'`);
      fields.set(k, n);
    }
    for (const k of shape.need) if (!fields.has(k)) throw bad(`${kind} needs ${k}=`);
    const rank = fields.get("rank")!;
    if (rank < 0) throw bad(`rank must be >= 0`);
    const at = fields.get("at");
    if (at !== undefined && at < 1) throw bad(`at counts operations from 1, got ${at}`);
    if (kind === "kill") out.push({ kind, rank, at: at! });
    else if (kind === "delay") {
      const ms = fields.get("ms")!;
      if (ms < 0) throw bad(`ms must be >= 0`);
      out.push(at === undefined ? { kind, rank, ms } : { kind, rank, ms, at });
    } else {
      const delta = fields.get("delta")!;
      out.push(at === undefined ? { kind, rank, delta } : { kind, rank, delta, at });
    }
  }
  return out;
}

export function faultsFromEnv(env: NodeJS.ProcessEnv = process.env): Fault[] {
  return env.CCLAB_FAULT ? parseFaults(env.CCLAB_FAULT) : [];
}

/** The spec a fault was parsed from, e.g. 'kill:rank=2,at=3'. */
export function formatFault(f: Fault): string {
  const fields = Object.entries(f)
    .filter(([k, v]) => k !== "kind" && v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  return `${f.kind}:${fields.join(",")}`;
}

/** Refuses faults naming a rank the job does not have (they would silently never fire). */
export function checkFaultRanks(faults: readonly Fault[], world: number, arg = "--fault"): void {
  for (const f of faults) {
    if (f.rank >= world) {
      throw new InvalidArgumentError(
        { op: "run", arg },
        `${formatFault(f)} names rank ${f.rank}, but the job has ranks 0..${world - 1}`,
      );
    }
  }
}

/** The count change a `count` fault asks of this rank's collectives (0 if none); for the front API. */
export function countDelta(faults: readonly Fault[], rank: number): number {
  let d = 0;
  for (const f of faults) if (f.kind === "count" && f.rank === rank && f.at === undefined) d += f.delta;
  return d;
}

export interface FaultOptions {
  /** This process's world rank (faults name world ranks). */
  rank: number;
  /** 'throw' for sim ranks (one process), 'exit' for process ranks (SIGKILL to itself). */
  mode: "throw" | "exit";
}

/** Shared by a faulty comm and the comms split from it: operations count per rank, not per comm. */
interface Counter {
  n: number;
}

export class FaultyComm extends CommLayer {
  private readonly mine: readonly Fault[];
  /** Shared with the comms split from this one, as the counter is. */
  private readonly fired: Set<Fault>;

  constructor(
    inner: Comm,
    faults: readonly Fault[],
    private readonly options: FaultOptions,
    private readonly counter: Counter = { n: 0 },
    fired?: Set<Fault>,
  ) {
    super(inner);
    this.mine = faults.filter((f) => f.rank === options.rank);
    this.fired = fired ?? new Set();
  }

  /** One line per fault of this rank that never fired (its rank made fewer operations than `at`). */
  unfired(): string[] {
    return this.mine
      .filter((f) => !this.fired.has(f))
      .map((f) => `fault ${formatFault(f)} never fired: rank ${f.rank} made ${this.counter.n} operations`);
  }

  /** A count fault shifts only what this rank announces, so checked mode can be shown catching it. */
  override beforeCollective(e: CollectiveEvent): Promise<void> {
    const delta = countDelta(this.mine, this.options.rank);
    if (delta !== 0) for (const f of this.mine) if (f.kind === "count" && f.at === undefined) this.fired.add(f);
    return super.beforeCollective({ ...e, count: e.count + delta });
  }

  /** Counts the operation, dies if told to; returns its delay and count change. */
  private enter(what: string): { delayMs: number; delta: number } {
    const k = ++this.counter.n;
    let delayMs = 0;
    let delta = 0;
    for (const f of this.mine) {
      if (f.at === undefined || f.at === k) this.fired.add(f);
      if (f.kind === "kill" && f.at === k) {
        const msg = `injected fault: rank ${this.options.rank} killed at its operation ${k} (${what})`;
        if (this.options.mode === "exit") {
          process.stderr.write(`${msg}\n`);
          process.kill(process.pid, "SIGKILL");
        }
        throw new InjectedFault(msg);
      }
      if (f.kind === "delay" && (f.at === undefined || f.at === k)) delayMs += f.ms;
      if (f.kind === "count" && (f.at === undefined || f.at === k)) delta += f.delta;
    }
    return { delayMs, delta };
  }

  /** The view as this rank would get it with its count off by delta (within its buffer). */
  private skew(v: View, delta: number): View {
    if (delta === 0) return v;
    const room = v.buffer.count - v.offset;
    let n = v.count + delta;
    if (n > room) n = Math.max(0, v.count - Math.abs(delta));
    return makeView(v.buffer, v.offset, Math.max(0, n));
  }

  private readonly sleeping = new Set<{ cancel: () => void; reject: (e: Error) => void }>();

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = {
        cancel: deadline(ms, () => {
          this.sleeping.delete(s);
          resolve();
        }),
        reject,
      };
      this.sleeping.add(s);
    });
  }

  /** Cancels pending delays (the job is over; their operations would never be used). */
  stop(): void {
    for (const s of this.sleeping) {
      s.cancel();
      s.reject(new InjectedFault(`injected delay on rank ${this.options.rank} cancelled: the job ended`));
    }
    this.sleeping.clear();
  }

  private async call<T>(what: string, f: (delta: number) => Promise<T>): Promise<T> {
    const { delayMs, delta } = this.enter(what);
    if (delayMs > 0) await this.sleep(delayMs);
    return f(delta);
  }

  override send(v: View, peer: number, options?: OpOptions): Promise<void> {
    return this.call(`send to ${peer}`, (d) => this.inner.send(this.skew(v, d), peer, options));
  }
  override recv(v: View, peer: number, options?: OpOptions): Promise<void> {
    return this.call(`recv from ${peer}`, (d) => this.inner.recv(this.skew(v, d), peer, options));
  }
  private post(what: string, f: (delta: number) => Work): Work {
    const { delayMs, delta } = this.enter(what);
    if (delayMs === 0) return f(delta);
    // Posting is synchronous; a delayed post hands back a Work that posts once the delay passes.
    let inner: Work | null = null;
    const posted = this.sleep(delayMs).then(() => (inner = f(delta)));
    posted.catch(() => {}); // surfaced by wait()
    return { wait: () => posted.then((w) => w.wait()), test: () => inner?.test() ?? false };
  }
  override isend(v: View, peer: number, options?: OpOptions): Work {
    return this.post(`isend to ${peer}`, (d) => this.inner.isend(this.skew(v, d), peer, options));
  }
  override irecv(v: View, peer: number, options?: OpOptions): Work {
    return this.post(`irecv from ${peer}`, (d) => this.inner.irecv(this.skew(v, d), peer, options));
  }
  override group(ops: readonly P2POp[], options?: OpOptions): Promise<void> {
    return this.call("group", (d) =>
      this.inner.group(d ? ops.map((o) => ({ ...o, view: this.skew(o.view, d) })) : ops, options),
    );
  }
  async split(ranks: readonly number[]): Promise<Comm> {
    const sub = await this.inner.split(ranks);
    return new FaultyComm(sub, this.mine, this.options, this.counter, this.fired);
  }
}

/** Wraps comm with the faults that name options.rank; returns comm itself when none do. */
export function withFaults(comm: Comm, faults: readonly Fault[], options: FaultOptions): Comm {
  if (!faults.some((f) => f.rank === options.rank)) return comm;
  return new FaultyComm(comm, faults, options);
}

/** The faults of this comm's rank that never fired, one line each (none without faults). */
export function unfiredFaults(comm: Comm): string[] {
  return findLayer(comm, (c): c is FaultyComm => c instanceof FaultyComm)?.unfired() ?? [];
}
