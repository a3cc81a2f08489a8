/**
 * What the network model knows of a machine: a directed graph of nodes (hosts where ranks sit,
 * and switches) joined by links, each with a bandwidth and a latency, plus the routing rule
 * that picks a message's path. Built by the families (families/, one file each; topology.ts parses
 * --topology); ranks are placed on hosts by
 * placement.ts. The flow simulator (flows.ts, simulate.ts) only reads this interface.
 *
 * Units inside the model: time in microseconds, bandwidth in bytes per microsecond (= MB/s),
 * sizes in bytes. Flags take units (400Gb/s, 50GB/s, 100ns): units.ts.
 */

/** The directed links of a topology, as parallel arrays (16,384-rank systems have ~10^5 links). */
export interface Links {
  readonly count: number;
  /** Link i goes from node from[i] to node to[i]. */
  readonly from: Int32Array;
  readonly to: Int32Array;
  /** Bytes per microsecond. */
  readonly bandwidth: Float64Array;
  /** Microseconds. */
  readonly latency: Float64Array;
  /** A short class per link for reports and pictures: 'x+', 'y-', 'up', 'down', 'nvlink', 'nic', 'rail', 'inject', 'eject'... */
  readonly kind: readonly string[];
}

export type NodeKind = "host" | "switch";

export interface Topology {
  /** As the user wrote it, normalised: 'torus:8x8', 'fattree:k=8,over=2'. */
  readonly name: string;
  /** The family that built it: a registered family's name (families/). */
  readonly family: string;
  /** Nodes 0..nodeCount-1. */
  readonly nodeCount: number;
  readonly nodeKind: (node: number) => NodeKind;
  /** A short name for reports: 'h12', 'leaf3', 'spine0', '(3,4)'. */
  readonly nodeName: (node: number) => string;
  /** Hosts (places a rank can sit) are hosts 0..hosts-1; host h is graph node hostNode(h). */
  readonly hosts: number;
  readonly hostNode: (host: number) => number;
  readonly links: Links;
  /** Switching latency charged once per hop (per link traversed), microseconds. */
  readonly hopLatency: number;
  /** The routing rule in words, for reports and docs: 'dimension order, shortest way round each ring'. */
  readonly routing: string;
  /**
   * Whether routes pick among equal paths by a hash of the pair (ECMP: the fat-tree's and the
   * rail system's default). There the copies of a symmetric schedule meet different collisions,
   * which the phases engine's shortcut times poorly, and 'auto' spends more on the exact engine.
   */
  readonly hashed?: boolean;
  /**
   * The routing rule: every path a message from host a to host b (a != b) takes, each link ids in
   * order; the message's bytes are split evenly across them. Single-path rules (dimension order,
   * ECMP's hash of the pair) give one; multipath rules (torus/mesh 'minimal', fat-tree and rail
   * 'spray') give several. Deterministic: the same pair always gives the same paths.
   */
  paths(a: number, b: number): readonly (readonly number[])[];
  /** What limits a host's traffic into the network, in words, where the family states it. */
  readonly injectionLimit?: string;
  /**
   * Groups of hosts for placement and hierarchical algorithms: the nodes of a rail system, the
   * leaves of a fat-tree, the dimension-0 rows of a torus or mesh; every host its own group on
   * full and ring. Groups are 0..groups-1; each group's hosts are consecutive in host order
   * except in file topologies (there: hosts behind the same first switch).
   */
  readonly groups: number;
  group(host: number): number;
  /** What a group is, for reports: 'node', 'leaf', 'row', 'host', 'switch'. */
  readonly groupName: string;
  /** A placement the topology itself carries (a JSON file's `ranks`); placeRanks' default when present. */
  readonly placement?: Placement;
  /** Where to draw each node in the heat map (grid coordinates, or level and index); optional. */
  readonly layout?: TopologyLayout;
}

export type TopologyLayout =
  /** A torus or mesh: node coordinates per dimension (dims.length entries per node). */
  | { readonly kind: "grid"; readonly dims: readonly number[]; readonly coords: (node: number) => readonly number[] }
  /** Levels, bottom (hosts) first: a fat-tree's hosts, leaves, spines; a rail system's GPUs, NVSwitches, rails, spines. */
  | { readonly kind: "levels"; readonly level: (node: number) => number; readonly index: (node: number) => number }
  /** A ring of nodes. */
  | { readonly kind: "ring" };

/** Which host each rank sits on (ranks 0..n-1; several ranks may share a host only if the user asks). */
export type Placement = Int32Array;
