/**
 * The machine's shape as a call carries it (CollectiveCall.shape): checked once here, where a
 * command or a caller hands one over, so an algorithm can trust its dimensions and placement.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { Shape } from "./types.js";

/** The ranks a shape's hosts hold: the product of a grid's dimensions, a rail system's GPUs, else its hosts. */
export function shapeHosts(s: Shape): number {
  if ("dims" in s) return s.dims.reduce((a, b) => a * b, 1);
  if (s.family === "rail") return s.nodes * s.gpusPerNode;
  return s.hosts;
}

/**
 * Refuses a shape that does not describe `size` ranks: dimensions that are not whole numbers >= 1,
 * hosts that disagree with them, a placement of the wrong length or naming a host outside the
 * machine. `site` names the command and its flag.
 */
export function checkShape(s: Shape, size: number, site: { readonly op: string; readonly arg?: string }): void {
  const bad = (detail: string) => new InvalidArgumentError(site, `topology '${s.name}': ${detail}`);
  if ("dims" in s) {
    if (s.dims.length === 0 || s.dims.some((a) => !Number.isSafeInteger(a) || a < 1))
      throw bad(`dimensions must be whole numbers >= 1, got ${s.dims.join("x") || "none"}`);
  }
  if (s.family === "rail") {
    for (const [k, v] of [
      ["nodes", s.nodes],
      ["GPUs per node", s.gpusPerNode],
      ["rails", s.rails],
    ] as const)
      if (!Number.isSafeInteger(v) || v < 1) throw bad(`${k} must be a whole number >= 1, got ${v}`);
  }
  if (shapeHosts(s) !== s.hosts) throw bad(`${s.hosts} hosts, but its dimensions hold ${shapeHosts(s)}`);
  if (s.hostOf.length !== size) throw bad(`places ${s.hostOf.length} ranks, the call has ${size}`);
  s.hostOf.forEach((h, r) => {
    if (!Number.isSafeInteger(h) || h < 0 || h >= s.hosts)
      throw bad(`rank ${r} is placed on host ${h}, outside its hosts 0..${s.hosts - 1}`);
  });
}
