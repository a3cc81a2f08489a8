/**
 * Looking algorithms up: the built-in ones (algorithms/) plus those users load from their own
 * files (cclab verify --algorithm-file ./mine.ts). Lookups go through maps built once and rebuilt
 * when an algorithm is registered, since the front API looks one up on every call.
 */
import { builtinAlgorithms } from "../../algorithms/index.js";
import { InvalidArgumentError } from "../core/errors.js";
import { suggest } from "../core/suggest.js";
import { COLLECTIVES, type Collective, findSpec } from "../specs/index.js";
import type { Algorithm } from "./dsl.js";

const userAlgorithms: Algorithm[] = [];
let byCollective: Map<string, Map<string, Algorithm>> | undefined;
let all: Algorithm[] | undefined;
let version = 0;

/** Changes whenever an algorithm is registered: caches of lookups compare it. */
export const registryVersion = (): number => version;

function index(): Map<string, Map<string, Algorithm>> {
  if (byCollective) return byCollective;
  byCollective = new Map(COLLECTIVES.map((c) => [c, new Map()]));
  for (const a of [...builtinAlgorithms, ...userAlgorithms]) byCollective.get(a.collective)?.set(a.name, a);
  return byCollective;
}

/** Every algorithm, built-in first, in registry order (collectives in the specs' order). */
export function allAlgorithms(): readonly Algorithm[] {
  all ??= COLLECTIVES.flatMap((c) => [...(index().get(c)?.values() ?? [])]);
  return all;
}

export function algorithmsOf(collective: string): readonly Algorithm[] {
  return [
    ...(index()
      .get(findSpec(collective)?.name ?? collective)
      ?.values() ?? []),
  ];
}

/** The algorithm `name` of a collective; an unknown name lists the registered ones and suggests the closest. */
export function findAlgorithm(
  collective: Collective | string,
  name: string,
  site: { rank?: number; op: string },
): Algorithm {
  const c = findSpec(collective)?.name ?? collective;
  const found = index().get(c)?.get(name);
  if (found) return found;
  const names = algorithmsOf(c).map((a) => a.name);
  const hint = suggest(name, names);
  throw new InvalidArgumentError(
    { ...site, arg: "algorithm" },
    `no ${c} algorithm named '${name}'${hint ? `; did you mean '${hint}'?` : ""}; registered: ${names.join(", ") || "none"}`,
  );
}

/** Adds a user's algorithm; its (collective, name) must not shadow another. */
export function registerAlgorithm(alg: Algorithm): void {
  const spec = findSpec(alg.collective);
  if (!spec || spec.name !== alg.collective) {
    throw new InvalidArgumentError(
      { op: "registerAlgorithm", arg: "collective" },
      `unknown collective '${alg.collective}'${spec ? `; write '${spec.name}'` : ""}; expected one of ${COLLECTIVES.join(", ")}`,
    );
  }
  if (index().get(alg.collective)?.has(alg.name)) {
    throw new InvalidArgumentError(
      { op: "registerAlgorithm", arg: "name" },
      `${alg.collective} already has an algorithm named '${alg.name}'; give yours another name`,
    );
  }
  userAlgorithms.push(alg);
  byCollective = undefined;
  all = undefined;
  version++;
}

/** The file an algorithm's source lives in (built-ins follow algorithms/<collective>/<name>.ts). */
export function algorithmFile(alg: Algorithm): string {
  return alg.file ?? new URL(`../../algorithms/${alg.collective}/${alg.name}.ts`, import.meta.url).pathname;
}
