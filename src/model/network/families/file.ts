/**
 * `file:PATH.json` (or any path ending in .json): any graph, read from a JSON file by
 * ../file.ts, which documents the format and its fewest-hops routing.
 */
import { topologyError } from "../builder.js";
import { MAX_TOPOLOGY_HOSTS, MAX_TOPOLOGY_LINKS, type TopologyFamily, type TopologyShape } from "../family.js";
import { fileTopology } from "../file.js";

interface FileShape extends TopologyShape {
  readonly path: string;
}

export const file: TopologyFamily<FileShape> = {
  name: "file",
  order: 100,
  routings: ["shortest"],
  syntax: "file:PATH.json",
  help: [["file:PATH.json", "any graph (see docs/network.md)"]],
  claims: (spec) => spec.toLowerCase().endsWith(".json"),
  parse(path) {
    if (path === "") throw topologyError("'file:' needs a path, e.g. file:examples/topologies/two-switches.json");
    // Its size is known once read: the reader checks it against the limits as it goes.
    return { family: "file", name: path, hosts: 0, links: 0, path };
  },
  build(shape, c) {
    return fileTopology(shape.path, {
      link: c.link,
      latency: c.latency,
      hopLatency: c.hopLatency,
      maxHosts: MAX_TOPOLOGY_HOSTS,
      maxLinks: MAX_TOPOLOGY_LINKS,
    });
  },
};
