/**
 * What a topology family is: one file under families/ exporting a `TopologyFamily` (its name, its
 * routing rules, its help, a parser from the text after `family:` to a typed shape, and a builder
 * from that shape and the link flags to a Topology). The registry (registry.ts) finds every family
 * file by itself; `--topology`, `--routing` and their help are made from these exports.
 */
import { InvalidArgumentError } from "../../core/errors.js";
import { suggest } from "../../core/suggest.js";
import { THRESHOLDS } from "./policy.js";
import type { Topology } from "./types.js";

/** Link parameters from the flags, in model units (bytes per microsecond, microseconds). */
export interface LinkOptions {
  /** --link: bandwidth of each network link (full: of each host's links). */
  readonly link?: number;
  /** --latency: latency of each link (ejection links, switch -> host, carry none). */
  readonly latency?: number;
  /** --hop-latency: switching latency charged per hop. */
  readonly hopLatency?: number;
  /** --injection: bandwidth of a host's links into the network (what each family says). */
  readonly injection?: number;
  /** --nvlink: a GPU's bandwidth to its node's NVSwitch, each way (rail). */
  readonly nvlink?: number;
  /** --nic: a GPU's NIC bandwidth, each way (rail). */
  readonly nic?: number;
  /** --routing: the family's routing rule (its `routings`); left out, the family's default. */
  readonly routing?: string;
}

/** The link flags a family may read besides --link, --latency and --hop-latency. */
export type FamilyFlag = "injection" | "nvlink" | "nic";

/**
 * Every family but `full`: 50 GB/s links (400 Gb/s, an NDR InfiniBand or 400GbE port), 100 ns per
 * link (serdes, FEC and a few metres of cable) and 100 ns per hop (a cut-through switch or torus
 * router); a GPU's NVLink 450 GB/s each way (H100: 900 GB/s bidirectional) and its NIC 400 Gb/s.
 */
export const NETWORK_DEFAULTS = {
  link: 50e3,
  latency: 0.1,
  hopLatency: 0.1,
  nvlink: 450e3,
  nic: 50e3,
} as const;

/** Refused before anything is allocated: a typo such as torus:100000x100000 fails at once. */
export const MAX_TOPOLOGY_HOSTS = THRESHOLDS.MAX_TOPOLOGY_HOSTS.value;
export const MAX_TOPOLOGY_LINKS = THRESHOLDS.MAX_TOPOLOGY_LINKS.value;

/**
 * A parsed `--topology` value: its family, its hosts and the links it will build (checked against
 * the limits above before anything is allocated), and, for the families laid out on a grid
 * (ring, torus, mesh, hyperx), its dimensions. Each family adds its own fields.
 */
export interface TopologyShape {
  readonly family: string;
  /** The normalised name: 'torus:8x8', 'fattree:leaves=4,hosts=16,spines=16'. */
  readonly name: string;
  readonly hosts: number;
  /** The links the builder will make (an upper bound where it is not exact). */
  readonly links: number;
  /** Grid families: the size of each dimension, dimension 0 first. */
  readonly dims?: readonly number[];
}

/** What a family's parser is told besides its text. */
export interface ParseContext {
  /** The whole --topology value, for error messages. */
  readonly spec: string;
  /** The ranks to place: a family whose size is left out sizes itself from them. */
  readonly ranks: number;
}

/** What a family's builder is told besides its shape: the flags, the routing rule chosen, the defaults applied. */
export interface BuildContext {
  readonly options: LinkOptions;
  /** One of the family's `routings` (the default when --routing was left out). */
  readonly routing: string;
  /** --link, --latency and --hop-latency, NETWORK_DEFAULTS where left out. */
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
}

export interface TopologyFamily<S extends TopologyShape = TopologyShape> {
  /** The word before ':' in --topology. */
  readonly name: string;
  /** Where the family stands in the help (ascending). */
  readonly order: number;
  /** Its routing rules, the default first; each with a short description for --routing's help. */
  readonly routings: readonly string[];
  /** Other spellings of its routing rules ('dor' on a ring is 'shortest'). */
  readonly routingAliases?: Readonly<Record<string, string>>;
  /** The --topology syntax in one line for the option's description: 'torus:AxB[xC..]'. */
  readonly syntax: string;
  /** Its lines in the --topology help, syntax then meaning: [['torus:AxB[xC...]', 'torus, any dimensions']]. */
  readonly help: readonly (readonly [string, string])[];
  /** The flags besides --link, --latency, --hop-latency it reads, and what each means here. */
  readonly flags?: Readonly<Partial<Record<FamilyFlag, string>>>;
  /** Whether a --topology value with no family word belongs to it (file: a path ending in .json). */
  readonly claims?: (spec: string) => boolean;
  /** The text after 'family:' ('' when there is none) into a shape; errors name --topology. */
  parse(rest: string, ctx: ParseContext): S;
  /** Checks the shape against the routing rule chosen (e.g. the paths a multipath rule may split over). */
  checkRouting?(shape: S, routing: string): void;
  build(shape: S, ctx: BuildContext): Topology;
}

/** Throws unless `f` is a well-formed family (what the registry accepts from a family file). */
export function isTopologyFamily(f: unknown): f is TopologyFamily {
  if (typeof f !== "object" || f === null) return false;
  const x = f as Partial<TopologyFamily>;
  return (
    typeof x.name === "string" &&
    typeof x.order === "number" &&
    Array.isArray(x.routings) &&
    x.routings.length > 0 &&
    typeof x.syntax === "string" &&
    Array.isArray(x.help) &&
    typeof x.parse === "function" &&
    typeof x.build === "function"
  );
}

/** The routing rule a family takes for `--routing` (its default when left out), or an error listing its rules. */
export function routingOf(family: TopologyFamily, asked: string | undefined): string {
  const r = asked?.trim().toLowerCase();
  if (r === undefined || r === "") return family.routings[0] as string;
  const alias = family.routingAliases?.[r];
  if (alias !== undefined) return alias;
  if (family.routings.includes(r)) return r;
  const h = suggest(r, family.routings);
  throw new InvalidArgumentError(
    { op: "--routing" },
    `'${asked}' is not a routing rule of ${family.name}${h ? ` (did you mean '${h}'?)` : ""}; it has ${family.routings.join(", ")}`,
  );
}
