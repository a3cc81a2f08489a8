/**
 * Label layout that never collides: each label offers candidate boxes (best first, possibly
 * with shorter text), and a greedy pass in priority order takes the first candidate that stays
 * inside the bounds and overlaps neither an obstacle (a lane line, the axis) nor a label already
 * placed; a label with no free candidate is left out (its element keeps a hover title). Pure and
 * DOM-free, so the static SVG (estimated text widths) and the step-through page (widths measured
 * by the browser) place labels the same way.
 */

export type LabelMode = "none" | "auto" | "all";
export const LABEL_MODES: readonly LabelMode[] = ["none", "auto", "all"];

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface Candidate {
  readonly box: Box;
  /** The text shown if this candidate is taken (a shorter variant may come later in the list). */
  readonly text: string;
  /** Where the text's anchor goes (SVG x, baseline y). */
  readonly x: number;
  readonly y: number;
  readonly anchor: "start" | "middle" | "end";
}

export interface LabelRequest {
  readonly candidates: readonly Candidate[];
}

/** Width of `text` at `fontSize` px. */
export type Measure = (text: string, fontSize: number) => number;

/**
 * A conservative width for Helvetica/Arial when no browser can measure: 0.62 em a character,
 * wider than the fonts' average (about 0.55 em), so estimated boxes contain the real text.
 */
export const estimateWidth: Measure = (text, fontSize) => text.length * fontSize * 0.62;

export function overlaps(a: Box, b: Box, pad = 0): boolean {
  return a.x < b.x + b.w + pad && b.x < a.x + a.w + pad && a.y < b.y + b.h + pad && b.y < a.y + a.h + pad;
}

/** Boxes in a uniform grid, so a test against many placed boxes looks only at its neighbours. */
export class Occupancy {
  private readonly cells = new Map<string, Box[]>();

  constructor(private readonly cell = 64) {}

  private keys(b: Box): string[] {
    const out: string[] = [];
    const c = this.cell;
    for (let i = Math.floor(b.x / c); i <= Math.floor((b.x + b.w) / c); i++)
      for (let j = Math.floor(b.y / c); j <= Math.floor((b.y + b.h) / c); j++) out.push(`${i},${j}`);
    return out;
  }

  add(b: Box): void {
    for (const k of this.keys(b)) {
      const list = this.cells.get(k);
      if (list) list.push(b);
      else this.cells.set(k, [b]);
    }
  }

  hits(b: Box, pad = 0): boolean {
    for (const k of this.keys(b)) for (const o of this.cells.get(k) ?? []) if (overlaps(b, o, pad)) return true;
    return false;
  }
}

/** Inside bounds, entirely. */
function inside(b: Box, bounds: Box): boolean {
  return b.x >= bounds.x && b.y >= bounds.y && b.x + b.w <= bounds.x + bounds.w && b.y + b.h <= bounds.y + bounds.h;
}

/**
 * Places labels greedily in the order given (put the important ones first). Returns, per
 * request, the candidate taken or undefined. `occupied` holds obstacles and grows with every
 * label placed, so several calls (step headers, then messages) share one picture.
 */
export function placeLabels(
  requests: readonly LabelRequest[],
  occupied: Occupancy,
  bounds: Box,
  gap = 2,
): (Candidate | undefined)[] {
  return requests.map((r) => {
    for (const c of r.candidates) {
      if (!inside(c.box, bounds) || occupied.hits(c.box, gap)) continue;
      occupied.add(c.box);
      return c;
    }
    return undefined;
  });
}

/** A text box for an anchor point: x by anchor, y the baseline (the box spans the font's ascent and descent). */
export function textBox(
  text: string,
  x: number,
  y: number,
  fontSize: number,
  anchor: "start" | "middle" | "end",
  measure: Measure,
): Candidate {
  const w = measure(text, fontSize);
  const left = anchor === "start" ? x : anchor === "middle" ? x - w / 2 : x - w;
  return { box: { x: left, y: y - fontSize * 0.85, w, h: fontSize * 1.1 }, text, x, y, anchor };
}
