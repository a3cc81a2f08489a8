/**
 * Looking algorithms up: the built-in registry plus algorithms users load from their own
 * files (cclab verify --algorithm-file ./mine.ts). Both are checked and run the same way.
 */
import { builtinAlgorithms } from "../algorithms/index.js";
import { InvalidArgumentError } from "./core/errors.js";
import { type Algorithm, COLLECTIVES, type Collective } from "./schedule/types.js";

const userAlgorithms: Algorithm[] = [];

export function isCollective(x: unknown): x is Collective {
  return typeof x === "string" && (COLLECTIVES as readonly string[]).includes(x);
}

/** Every algorithm, built-in first, in registry order. */
export function allAlgorithms(): Algorithm[] {
  return [...COLLECTIVES.flatMap((c) => builtinAlgorithms[c]), ...userAlgorithms];
}

export function algorithmsOf(collective: Collective): Algorithm[] {
  return allAlgorithms().filter((a) => a.collective === collective);
}

export function findAlgorithm(collective: Collective, name: string, site: { rank?: number; op: string }): Algorithm {
  const found = algorithmsOf(collective).find((a) => a.name === name);
  if (found) return found;
  const names = algorithmsOf(collective).map((a) => a.name);
  throw new InvalidArgumentError(
    { ...site, arg: "algorithm" },
    `no ${collective} algorithm named '${name}'; registered: ${names.join(", ") || "none"}`,
  );
}

/** Adds a user's algorithm; its (collective, name) must not shadow another. */
export function registerAlgorithm(alg: Algorithm): void {
  if (!isCollective(alg.collective)) {
    throw new InvalidArgumentError(
      { op: "registerAlgorithm", arg: "collective" },
      `unknown collective '${alg.collective}'`,
    );
  }
  if (algorithmsOf(alg.collective).some((a) => a.name === alg.name)) {
    throw new InvalidArgumentError(
      { op: "registerAlgorithm", arg: "name" },
      `${alg.collective} already has an algorithm named '${alg.name}'; give yours another name`,
    );
  }
  userAlgorithms.push(alg);
}

/** The file an algorithm's source lives in (built-ins follow algorithms/<collective>/<name>.ts). */
export function algorithmFile(alg: Algorithm): string {
  return alg.file ?? new URL(`../algorithms/${alg.collective}/${alg.name}.ts`, import.meta.url).pathname;
}
