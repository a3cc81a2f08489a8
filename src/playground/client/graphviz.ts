/**
 * Graphviz (@viz-js/viz, WebAssembly) for the deadlock's wait-for graph, as the step-through page
 * lays it out: built into its own asset (assets/graphviz.js, most of the site's bytes) that the
 * page loads only when a run deadlocks, so the first load never pays for it.
 */
import { instance } from "@viz-js/viz";

(globalThis as unknown as { CCLAB_GRAPHVIZ: typeof instance }).CCLAB_GRAPHVIZ = instance;
