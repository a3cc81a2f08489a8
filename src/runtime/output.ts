/**
 * "[rank k] " in front of every output line. Process ranks get it from their launcher (it reads
 * their pipes) or, under mpirun, by patching their own stdout/stderr; sim ranks share one process,
 * so each rank's function runs in an async-local context and the patched streams look it up.
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Write = (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;

/** Splits a stream into lines and emits each complete line with the prefix; flush() emits the tail. */
export class LinePrefixer {
  private tail = "";
  constructor(
    private readonly prefix: string,
    private readonly emit: (s: string) => void,
  ) {}
  push(chunk: string | Uint8Array): void {
    const text = this.tail + (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const lines = text.split("\n");
    this.tail = lines.pop()!;
    if (lines.length) this.emit(lines.map((l) => `${this.prefix}${l}\n`).join(""));
  }
  flush(): void {
    if (this.tail) this.emit(`${this.prefix}${this.tail}\n`);
    this.tail = "";
  }
}

function patch(stream: NodeJS.WriteStream, route: (orig: Write, chunk: string | Uint8Array) => boolean): () => void {
  const orig = stream.write.bind(stream) as Write;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    // Routed text is re-emitted by line; anything else passes through untouched.
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) return orig(chunk, ...rest);
    return route(orig, chunk);
  }) as typeof stream.write;
  return () => {
    stream.write = orig as typeof stream.write;
  };
}

/** This process is one rank: prefix everything it writes. Returns a restore function (flushes). */
export function installRankPrefix(rank: number): () => void {
  const restores = [process.stdout, process.stderr].map((s) => {
    let orig: Write | null = null;
    const p = new LinePrefixer(`[rank ${rank}] `, (t) => orig?.(t));
    const restore = patch(s, (o, chunk) => {
      orig = o;
      p.push(chunk);
      return true;
    });
    return () => {
      p.flush();
      restore();
    };
  });
  return () => {
    for (const r of restores) r();
  };
}

/** Sim ranks in one process: `run(rank, fn)` prefixes whatever fn (and what it awaits) writes. */
export class RankOutput {
  private readonly als = new AsyncLocalStorage<number>();
  private readonly prefixers = new Map<string, LinePrefixer>();
  private readonly restores: (() => void)[] = [];

  constructor() {
    for (const [name, s] of [
      ["out", process.stdout],
      ["err", process.stderr],
    ] as const) {
      this.restores.push(
        patch(s, (orig, chunk) => {
          const rank = this.als.getStore();
          if (rank === undefined) return orig(chunk);
          const key = `${name}/${rank}`;
          let p = this.prefixers.get(key);
          if (!p) this.prefixers.set(key, (p = new LinePrefixer(`[rank ${rank}] `, (t) => orig(t))));
          p.push(chunk);
          return true;
        }),
      );
    }
  }

  run<T>(rank: number, fn: () => T): T {
    return this.als.run(rank, fn);
  }

  /** The rank whose code (or callback it set up) is running now; undefined outside every rank. */
  current(): number | undefined {
    return this.als.getStore();
  }

  /** Emits unterminated lines and restores the streams. */
  close(): void {
    for (const p of this.prefixers.values()) p.flush();
    for (const r of this.restores) r();
  }
}
