/**
 * The page's result panels built from what the Worker sent (checked by check.ts first): each
 * rank's printed output, kept within a bound (output.ts) and drawn at most every 100 ms so a
 * program printing without end leaves the page answering, and Verify's verdict. Text only.
 */
import { fill, h } from "./dom.js";
import { Kept } from "./output.js";
import type { Printed, VerifyResult } from "./protocol.js";

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

const streams = new Map<number, Kept>();
const dirty = new Set<number>();
let drawTimer: number | undefined;

/** Empties the output panels. */
export function clearOutput(): void {
  fill(byId("ranks"));
  byId("console").textContent = "";
  byId("console").classList.add("hidden");
  streams.clear();
  dirty.clear();
}

/** One panel per rank, empty. */
export function rankPanels(n: number): void {
  fill(
    byId("ranks"),
    ...Array.from({ length: n }, (_, r) =>
      h("div", {}, h("h3", {}, `rank ${r}`), h("pre", { id: `rank-${r}`, class: "rank-out" })),
    ),
  );
  byId("output-out").classList.remove("hidden");
}

/** Lines the Worker sent: kept, and drawn a moment later. */
export function printed(p: Printed): void {
  let k = streams.get(p.rank);
  if (!k) {
    k = new Kept();
    streams.set(p.rank, k);
  }
  k.skip(p.skipped);
  for (const line of p.lines) k.add(line);
  dirty.add(p.rank);
  drawTimer ??= window.setTimeout(drawOutput, 100);
}

/** Draws what is waiting now (a job's end). */
export function flushOutput(): void {
  if (drawTimer === undefined) return;
  clearTimeout(drawTimer);
  drawOutput();
}

function drawOutput(): void {
  drawTimer = undefined;
  for (const rank of dirty) {
    const el = rank < 0 ? byId("console") : document.getElementById(`rank-${rank}`);
    const k = streams.get(rank);
    if (!el || !k) continue;
    el.classList.remove("hidden");
    el.textContent = k.text();
  }
  dirty.clear();
}

/** Verify's verdict into `el`; a failure's replay button calls `onReplay`. */
export function showVerify(
  el: HTMLElement,
  r: VerifyResult,
  onReplay: (f: NonNullable<VerifyResult["failure"]>) => void,
): void {
  el.classList.remove("hidden");
  const f = r.failure;
  const head = `${r.algorithm}: static proof, ${r.staticCases} cases; property tests, ${r.propertyCases} cases`;
  if (!f) {
    fill(el, h("h2", { id: "verify-verdict" }, "verified"), h("pre", {}, `${head}: all pass`));
    return;
  }
  const replay = h(
    "button",
    { id: "replay" },
    `explain it here (n = ${f.replay.n}${f.replay.count !== undefined ? `, count = ${f.replay.count}` : ""})`,
  );
  replay.addEventListener("click", () => onReplay(f));
  fill(
    el,
    h(
      "div",
      { class: "failure" },
      h("h2", { id: "verify-verdict" }, `FAILED (${f.phase === "proof" ? "static proof" : "property test"})`),
      h("pre", {}, head),
      h("h2", {}, "counterexample"),
      h("pre", { id: "counterexample" }, f.message),
      h("p", {}, "replay: ", replay, " or, in a checkout, ", h("code", {}, f.command)),
    ),
  );
}
