/**
 * The network model's flags, defined and parsed in one place for `cclab model` and `cclab bench
 * --backend sim`: --topology, the link parameters with units (--link 50GB/s, --latency 100ns),
 * --routing, --placement, --engine and --threads (docs/network.md). Without --topology, or with a plain
 * `full` and none of the other flags, a command keeps the alpha-beta model.
 */
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import type { NetworkRequest } from "../model/machine.js";
import {
  ENGINES,
  type Engine,
  FAMILIES,
  type FamilyFlag,
  parseBandwidth,
  parseTime,
  THRESHOLDS as T,
} from "../model/network/index.js";
import { decimal } from "./options.js";

/** The flags as commander hands them over. */
export interface NetworkFlags {
  topology?: string;
  link?: number;
  latency?: number;
  hopLatency?: number;
  injection?: number;
  nvlink?: number;
  nic?: number;
  routing?: string;
  placement?: string;
  engine?: Engine;
  threads?: number;
  solveBudget?: number;
}

const bandwidth = (flag: string) => (v: string) => parseBandwidth(v, flag);

/** What a family-specific flag means, family by family, from the families themselves: 'rail: ...; fattree: ...'. */
function familyFlagHelp(flag: FamilyFlag): string {
  const byText = new Map<string, string[]>();
  for (const f of FAMILIES) {
    const text = f.flags?.[flag];
    if (text !== undefined) byText.set(text, [...(byText.get(text) ?? []), f.name]);
  }
  return [...byText].map(([text, names]) => `${names.join(", ")}: ${text}`).join("; ");
}
const time = (flag: string) => (v: string) => parseTime(v, flag);
const n = (x: number) => x.toLocaleString("en");

/**
 * Adds the network flags to a command; `prefix` starts each description ('sim: ' on bench), and
 * `also` ends --topology's and --placement's (what they do on bench's other backends).
 */
export function addNetworkOptions(cmd: Command, prefix = "", also = ""): Command {
  return cmd
    .addOption(
      new Option(
        "--topology <spec>",
        `${prefix}time on a network: ${FAMILIES.map((f) => f.syntax).join(", ")} (docs/network.md)${also}`,
      ),
    )
    .addOption(
      new Option(
        "--link <bw>",
        `${prefix}network link bandwidth, e.g. 50GB/s, 400Gb/s (full: 25GB/s, else 50GB/s)`,
      ).argParser(bandwidth("--link")),
    )
    .addOption(
      new Option("--latency <t>", `${prefix}latency of each link, e.g. 100ns (full: 5us, else 100ns)`).argParser(
        time("--latency"),
      ),
    )
    .addOption(
      new Option("--hop-latency <t>", `${prefix}switching latency per hop (full: 0, else 100ns)`).argParser(
        time("--hop-latency"),
      ),
    )
    .addOption(
      new Option("--injection <bw>", `${prefix}${familyFlagHelp("injection")}`).argParser(bandwidth("--injection")),
    )
    .addOption(new Option("--nvlink <bw>", `${prefix}${familyFlagHelp("nvlink")}`).argParser(bandwidth("--nvlink")))
    .addOption(new Option("--nic <bw>", `${prefix}${familyFlagHelp("nic")}`).argParser(bandwidth("--nic")))
    .addOption(
      new Option(
        "--routing <rule>",
        `${prefix}routing rule of the family (${FAMILIES.filter((f) => f.routings.length > 1)
          .map((f) => `${f.name}: ${f.routings.join("|")}`)
          .join("; ")}; the first is the default)`,
      ),
    )
    .addOption(new Option("--placement <how>", `${prefix}ranks on hosts: block, round-robin or file:PATH${also}`))
    .addOption(
      new Option(
        "--engine <name>",
        `${prefix}network engine: exact (every operation, as far as its memory goes), simgrid (model, one call: SimGrid's own max-min model, where python3-simgrid is installed), phases (rounds solved once, approximate), auto (exact up to ${n(T.AUTO_EXACT_MAX_RANKS.value)} ranks, to ${n(T.AUTO_EXACT_LARGE_MAX_RANKS.value)} for calls of at most ${n(T.AUTO_EXACT_MAX_OPERATIONS.value)} operations, and on ECMP-hashed networks for calls of at most ${n(T.AUTO_EXACT_HASHED_MAX_OPERATIONS.value)}, where it fits the heap)`,
      ).choices([...ENGINES, "simgrid"]),
    )
    .addOption(
      new Option(
        "--threads <n>",
        `${prefix}network phases engine: threads solving its distinct rounds at once (default: the machine's cores; 1: one)`,
      ).argParser((v: string) => decimal("model", "--threads", v, 1, 1024)),
    )
    .addOption(
      new Option(
        "--solve-budget <n>",
        `${prefix}network model: link crossings one call's rate solves may scan before it is refused, saying what fits (default ${n(T.SOLVE_WORK.value)}: about 15 s of solving on 2 cores)`,
      ).argParser((v: string) => decimal("model", "--solve-budget", v, 1, Number.MAX_SAFE_INTEGER)),
    );
}

/** The alpha-beta model's own flags: meaningless on a network, whose links have --latency and --link. */
const ALPHA_BETA_FLAGS: Record<string, string> = {
  alpha: "--alpha (on a network: --latency)",
  beta: "--beta (on a network: --link)",
  contention: "--contention",
};

/**
 * Refuses the alpha-beta flags given on the command line (`given`: option keys whose value came
 * from it) when a network is modelled, naming the flag and what the network takes instead.
 */
export function refuseAlphaBeta(cmd: string, given: readonly string[], network: NetworkRequest | undefined): void {
  if (!network) return;
  const ab = given.filter((k) => k in ALPHA_BETA_FLAGS);
  if (ab.length === 0) return;
  throw new InvalidArgumentError(
    { op: cmd, arg: (ALPHA_BETA_FLAGS[ab[0] as string] as string).split(" ")[0] as string },
    `is the alpha-beta model's; with --topology the links say it: ${ab.map((k) => ALPHA_BETA_FLAGS[k]).join(", ")}`,
  );
}

/** The option keys whose value came from the command line (not a default). */
export function givenOptions(c: Command): string[] {
  return Object.keys(c.opts()).filter((k) => c.getOptionValueSource(k) === "cli");
}

/** The flags besides --topology that only the network model reads. */
const NETWORK_ONLY: readonly (keyof NetworkFlags)[] = [
  "link",
  "latency",
  "hopLatency",
  "injection",
  "nvlink",
  "nic",
  "routing",
  "placement",
  "engine",
  "threads",
  "solveBudget",
];

const FLAG_NAME: Record<string, string> = { hopLatency: "--hop-latency", solveBudget: "--solve-budget" };
const flagName = (k: string) => FLAG_NAME[k] ?? `--${k}`;

/** The flags given that only the network model reads (all but --topology and --placement), as typed. */
export function modelFlagsGiven(f: NetworkFlags): string[] {
  return NETWORK_ONLY.filter((k) => k !== "placement" && f[k] !== undefined).map((k) => flagName(k as string));
}

/**
 * The network the flags ask for, or undefined for the alpha-beta model: no --topology, or `full`
 * (or `full:N` for the n ranks) with no other network flag, which is exactly today's model.
 * A network flag without --topology is an error naming it.
 */
export function networkRequest(cmd: string, f: NetworkFlags, n: number): NetworkRequest | undefined {
  const given = NETWORK_ONLY.filter((k) => f[k] !== undefined);
  const spec = f.topology?.trim();
  if (spec === undefined) {
    if (given.length > 0) {
      throw new InvalidArgumentError(
        { op: cmd, arg: flagName(given[0] as string) },
        "is a network flag: give --topology too (e.g. --topology torus:4x4; docs/network.md)",
      );
    }
    return undefined;
  }
  if ((spec === "full" || spec === `full:${n}`) && given.length === 0) return undefined;
  const simgrid = (f.engine as string | undefined) === "simgrid";
  if (simgrid && cmd !== "model")
    throw new InvalidArgumentError(
      { op: cmd, arg: "--engine" },
      "simgrid times one call of cclab model; here use exact, phases or auto",
    );
  return {
    topology: spec,
    links: {
      link: f.link,
      latency: f.latency,
      hopLatency: f.hopLatency,
      injection: f.injection,
      nvlink: f.nvlink,
      nic: f.nic,
      routing: f.routing,
    },
    placement: f.placement,
    engine: simgrid ? "exact" : f.engine,
    ...(simgrid ? { simgrid: true } : {}),
    ...(f.threads !== undefined ? { threads: f.threads } : {}),
    ...(f.solveBudget !== undefined ? { solveBudget: f.solveBudget } : {}),
  };
}
