/**
 * Graphviz, compiled to WebAssembly (@viz-js/viz), lays out the deadlock's wait-for graph for the
 * step-through page: `dot` places any number of blocked ranks, chains and cycles without
 * overlapping boxes or edge labels, which a hand-placed circle cannot promise. It runs here in
 * Node when the page is written, so the page carries plain SVG and no WebAssembly.
 */
import type { Viz } from "@viz-js/viz";

let viz: Promise<Viz> | undefined;

/** DOT text to an SVG document (Graphviz 'dot' layout). */
export async function dotToSvg(dot: string): Promise<string> {
  viz ??= import("@viz-js/viz").then((m) => m.instance());
  const v = await viz;
  return v.renderString(dot, { format: "svg", engine: "dot" });
}
