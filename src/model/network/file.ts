/**
 * `file:PATH.json` (or any path ending in .json): a topology read from a JSON file.
 *
 *   {
 *     "name": "two leaves",                       optional
 *     "hopLatency": "100ns",                      optional (default --hop-latency)
 *     "hostsForward": false,                      optional: may routes pass through hosts?
 *     "nodes": [ { "name": "h0", "kind": "host", "group": "rack0" }, { "name": "s0", "kind": "switch" } ],
 *     "links": [ { "from": "h0", "to": "s0", "bandwidth": "50GB/s", "latency": "100ns",
 *                  "duplex": true, "kind": "nic" } ],
 *     "ranks": [ "h0", "h1" ]                     optional: host names in rank order
 *   }
 *
 * Hosts are the nodes of kind "host", numbered in file order. A link's bandwidth and latency
 * default to --link and --latency; `duplex` (default true) adds the reverse link too, with the
 * same bandwidth and latency, at the next link id. A host's group (for round-robin placement and
 * hierarchical algorithms) is its `group` if given, else the node its first link leads to.
 *
 * Routing: fewest hops, by a breadth-first search from the source taking each node's links in
 * link id order (file order), so of equally short paths the one found first wins: deterministic.
 * Routes pass through switches only unless "hostsForward" is true. The search tree of each source
 * is cached (a bounded number of sources). A pair with no path is an error naming both hosts.
 */
import { suggest } from "../../core/suggest.js";
import { escapeControl } from "../../core/text.js";
import { readInputFile } from "../../tools/input-file.js";
import { checkPair, LinkTable, topologyError } from "./builder.js";
import type { Topology } from "./types.js";
import { parseBandwidth, parseTime } from "./units.js";

/** Files larger than this are refused while they are read. */
export const MAX_TOPOLOGY_FILE = 64 * 2 ** 20;

/** Cached search trees, in node entries all together (2^24 Int32 entries: 64 MiB). */
const CACHE_ENTRIES = 2 ** 24;

export interface FileDefaults {
  readonly link: number;
  readonly latency: number;
  readonly hopLatency: number;
  readonly maxHosts: number;
  readonly maxLinks: number;
}

const TOP_KEYS = ["name", "hopLatency", "hostsForward", "nodes", "links", "ranks"];
const NODE_KEYS = ["name", "kind", "group"];
const LINK_KEYS = ["from", "to", "bandwidth", "latency", "duplex", "kind"];

const shownJson = (v: object) => escapeControl(JSON.stringify(v));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function fileTopology(path: string, d: FileDefaults): Topology {
  // Names and values from the file are shown with control characters escaped, in messages as in
  // every picture and report (nodeName, link kinds, the topology's name).
  const err = (where: string, detail: string) =>
    topologyError(`${path}: ${where}${where ? ": " : ""}${escapeControl(detail)}`);
  const shown = (v: unknown) =>
    typeof v === "string" ? escapeControl(v) : typeof v === "object" && v !== null ? shownJson(v) : v;
  const text = readInputFile(path, {
    what: "topology file",
    maxBytes: MAX_TOPOLOGY_FILE,
    fail: (d) => topologyError(d),
  });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw err("", `not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc)) throw err("", "expected a JSON object with 'nodes' and 'links'");
  const unknownKey = (obj: Record<string, unknown>, allowed: readonly string[], where: string) => {
    for (const k of Object.keys(obj))
      if (!allowed.includes(k)) {
        const hint = suggest(k, allowed);
        throw err(
          where,
          `unknown field '${k}'${hint ? ` (did you mean '${hint}'?)` : ""}; expected ${allowed.join(", ")}`,
        );
      }
  };
  unknownKey(doc, TOP_KEYS, "");
  const { nodes, links: linkSpecs } = doc;
  if (!Array.isArray(nodes) || nodes.length === 0) throw err("nodes", "expected a non-empty array of nodes");
  if (!Array.isArray(linkSpecs)) throw err("links", "expected an array of links");
  if (nodes.length > d.maxHosts * 4)
    throw err("nodes", `${nodes.length} nodes, more than the ${d.maxHosts * 4} allowed`);
  if (linkSpecs.length * 2 > d.maxLinks)
    throw err("links", `${linkSpecs.length} links, more than the ${d.maxLinks / 2} allowed`);
  const hopLatency =
    doc.hopLatency === undefined
      ? d.hopLatency
      : parseTime(shown(doc.hopLatency) as string, `--topology: ${path}: hopLatency`);
  if (doc.hostsForward !== undefined && typeof doc.hostsForward !== "boolean")
    throw err("hostsForward", `expected true or false, got ${JSON.stringify(doc.hostsForward)}`);
  const hostsForward = doc.hostsForward === true;
  if (doc.name !== undefined && typeof doc.name !== "string")
    throw err("name", `expected a string, got ${JSON.stringify(doc.name)}`);
  const name = doc.name === undefined ? path : escapeControl(doc.name);

  const index = new Map<string, number>();
  const isHost: boolean[] = [];
  const names: string[] = [];
  const hostNodes: number[] = [];
  const hostOf = new Map<number, number>();
  const groupLabel: (string | undefined)[] = [];
  nodes.forEach((n, i) => {
    const where = `nodes[${i}]`;
    if (!isObject(n)) throw err(where, `expected an object like {"name": "h0", "kind": "host"}`);
    unknownKey(n, NODE_KEYS, where);
    if (typeof n.name !== "string" || n.name === "")
      throw err(`${where}.name`, `expected a non-empty string, got ${JSON.stringify(n.name)}`);
    if (index.has(n.name)) throw err(`${where}.name`, `'${n.name}' is already nodes[${index.get(n.name)}]`);
    if (n.kind !== "host" && n.kind !== "switch")
      throw err(`${where}.kind`, `expected "host" or "switch", got ${JSON.stringify(n.kind)}`);
    if (n.group !== undefined && typeof n.group !== "string" && typeof n.group !== "number")
      throw err(`${where}.group`, `expected a string or a number, got ${JSON.stringify(n.group)}`);
    index.set(n.name, i);
    names.push(escapeControl(n.name));
    isHost.push(n.kind === "host");
    if (n.kind === "host") {
      hostOf.set(i, hostNodes.length);
      hostNodes.push(i);
      groupLabel.push(n.group === undefined ? undefined : String(n.group));
    }
  });
  if (hostNodes.length === 0) throw err("nodes", 'no node has kind "host"; ranks sit on hosts');
  if (hostNodes.length > d.maxHosts)
    throw err("nodes", `${hostNodes.length} hosts, more than the ${d.maxHosts} allowed`);

  const table = new LinkTable();
  const nodeRef = (v: unknown, where: string): number => {
    if (typeof v !== "string") throw err(where, `expected a node name, got ${JSON.stringify(v)}`);
    const i = index.get(v);
    if (i === undefined) {
      const hint = suggest(v, names.length <= 10000 ? names : []);
      throw err(where, `no node named '${v}'${hint ? ` (did you mean '${hint}'?)` : ""}`);
    }
    return i;
  };
  linkSpecs.forEach((l, i) => {
    const where = `links[${i}]`;
    if (!isObject(l)) throw err(where, `expected an object like {"from": "h0", "to": "s0", "bandwidth": "50GB/s"}`);
    unknownKey(l, LINK_KEYS, where);
    const from = nodeRef(l.from, `${where}.from`);
    const to = nodeRef(l.to, `${where}.to`);
    if (from === to) throw err(where, `a link from '${names[from]}' to itself`);
    const bw =
      l.bandwidth === undefined
        ? d.link
        : parseBandwidth(shown(l.bandwidth) as string, `--topology: ${path}: ${where}.bandwidth`);
    const lat =
      l.latency === undefined
        ? d.latency
        : parseTime(shown(l.latency) as string, `--topology: ${path}: ${where}.latency`);
    if (l.duplex !== undefined && typeof l.duplex !== "boolean")
      throw err(`${where}.duplex`, `expected true or false, got ${JSON.stringify(l.duplex)}`);
    if (l.kind !== undefined && typeof l.kind !== "string")
      throw err(`${where}.kind`, `expected a string, got ${JSON.stringify(l.kind)}`);
    const kind = escapeControl((l.kind as string | undefined) ?? "link");
    table.add(from, to, bw, lat, kind);
    if (l.duplex !== false) table.add(to, from, bw, lat, kind);
  });
  const links = table.finish();
  const N = nodes.length;
  const H = hostNodes.length;

  // Out-links of each node in id order (CSR).
  const first = new Int32Array(N + 1);
  for (let i = 0; i < links.count; i++) first[links.from[i]! + 1]!++;
  for (let v = 0; v < N; v++) first[v + 1]! += first[v]!;
  const outLinks = new Int32Array(links.count);
  const fill = first.slice(0, N);
  for (let i = 0; i < links.count; i++) outLinks[fill[links.from[i]!]!++] = i;

  // Groups: the `group` label, else the node the host's first link leads to.
  const groupIds = new Map<string, number>();
  const groupOf = new Int32Array(H);
  for (let h = 0; h < H; h++) {
    const v = hostNodes[h]!;
    const label =
      groupLabel[h] !== undefined
        ? `g:${groupLabel[h]}`
        : first[v + 1]! > first[v]!
          ? `n:${links.to[outLinks[first[v]!]!]!}`
          : `h:${h}`;
    let g = groupIds.get(label);
    if (g === undefined) groupIds.set(label, (g = groupIds.size));
    groupOf[h] = g;
  }

  let placement: Int32Array | undefined;
  if (doc.ranks !== undefined) {
    if (!Array.isArray(doc.ranks)) throw err("ranks", "expected an array of host names in rank order");
    placement = new Int32Array(doc.ranks.length);
    const owner = new Map<number, number>();
    doc.ranks.forEach((r, i) => {
      const v = nodeRef(r, `ranks[${i}]`);
      const h = hostOf.get(v);
      if (h === undefined) throw err(`ranks[${i}]`, `'${names[v]}' is a switch; ranks sit on hosts`);
      const prior = owner.get(h);
      if (prior !== undefined) throw err(`ranks[${i}]`, `host '${names[v]}' already holds rank ${prior}`);
      owner.set(h, i);
      placement![i] = h;
    });
  }

  // Breadth-first search trees, one per source host, cached (oldest dropped first).
  const trees = new Map<number, Int32Array>();
  const maxTrees = Math.max(16, Math.floor(CACHE_ENTRIES / N));
  const queue = new Int32Array(N);
  const treeOf = (a: number): Int32Array => {
    let parent = trees.get(a);
    if (parent) return parent;
    parent = new Int32Array(N).fill(-1);
    const src = hostNodes[a]!;
    parent[src] = -2;
    let head = 0;
    let tail = 0;
    queue[tail++] = src;
    while (head < tail) {
      const v = queue[head++]!;
      if (v !== src && isHost[v] && !hostsForward) continue;
      for (let k = first[v]!; k < first[v + 1]!; k++) {
        const id = outLinks[k]!;
        const w = links.to[id]!;
        if (parent[w] !== -1) continue;
        parent[w] = id;
        queue[tail++] = w;
      }
    }
    if (trees.size >= maxTrees) trees.delete(trees.keys().next().value as number);
    trees.set(a, parent);
    return parent;
  };
  const route = (a: number, b: number, _flow: number, out: number[]): void => {
    checkPair(a, b, H, "route");
    const parent = treeOf(a);
    const dst = hostNodes[b]!;
    if (parent[dst] === -1) throw err("", `no route from host '${names[hostNodes[a]!]}' to host '${names[dst]}'`);
    out.length = 0;
    for (let v = dst; v !== hostNodes[a]; ) {
      const id = parent[v]!;
      out.push(id);
      v = links.from[id]!;
    }
    out.reverse();
  };
  // Layout: level = hops from the nearest host (hosts 0, their switches 1, ...), index = order within the level.
  const level = new Int32Array(N).fill(-1);
  const levelIndex = new Int32Array(N);
  const levelSize: number[] = [];
  {
    let head = 0;
    let tail = 0;
    for (const v of hostNodes) {
      level[v] = 0;
      queue[tail++] = v;
    }
    while (head < tail) {
      const v = queue[head++]!;
      for (let k = first[v]!; k < first[v + 1]!; k++) {
        const w = links.to[outLinks[k]!]!;
        if (level[w] !== -1) continue;
        level[w] = level[v]! + 1;
        queue[tail++] = w;
      }
    }
    let deepest = 0;
    for (let v = 0; v < N; v++) deepest = Math.max(deepest, level[v]!);
    for (let v = 0; v < N; v++) {
      if (level[v] === -1) level[v] = deepest + 1; // switches no host reaches
      const l = level[v]!;
      while (levelSize.length <= l) levelSize.push(0);
      levelIndex[v] = levelSize[l]!++;
    }
  }
  return {
    name,
    family: "file",
    nodeCount: N,
    nodeKind: (v) => (isHost[v] ? "host" : "switch"),
    nodeName: (v) => names[v] ?? `node${v}`,
    hosts: H,
    hostNode: (h) => hostNodes[h]!,
    links,
    hopLatency,
    routing: `fewest hops (breadth-first, links in file order; ties to the first found)${hostsForward ? "" : ", through switches only"}`,
    paths: (a, b) => {
      const one: number[] = [];
      route(a, b, 0, one);
      return [one];
    },
    groups: groupIds.size,
    group: (h) => groupOf[h]!,
    groupName: "group",
    ...(placement ? { placement } : {}),
    layout: { kind: "levels", level: (v) => level[v]!, index: (v) => levelIndex[v]! },
  };
}
