/**
 * Small helpers the SVG renderers share: escaping, number formatting and a standalone
 * document wrapper. Everything here is pure string building, so pictures are reproducible
 * byte-for-byte and tests can read them without a DOM.
 */

/** Escapes text for SVG/XML content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Coordinates with at most one decimal: short files, stable output. */
export function px(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/** 1536 -> '1.5 KiB'. */
export function bytesText(b: number): string {
  if (b < 1024) return `${b} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = b / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

/** A time in microseconds, as a person reads it: 12.3 µs, 4.56 ms, 1.23 s. */
export function timeText(us: number): string {
  if (us < 1000) return `${us < 10 ? us.toFixed(2) : us.toFixed(1)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** A standalone SVG document with a viewBox, a title and a white background. */
export function svgDocument(width: number, height: number, title: string, body: string[], defs = ""): string {
  const w = Math.ceil(width);
  const h = Math.ceil(height);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${esc(title)}</title>`,
    defs ? `<defs>${defs}</defs>` : "",
    `<rect x="0" y="0" width="${w}" height="${h}" fill="#ffffff"/>`,
    ...body,
    "</svg>",
    "",
  ]
    .filter((l) => l !== "")
    .join("\n");
}

/** An HTML page that shows one SVG, sized to it, for browsers and screenshots. */
export function htmlPage(title: string, svg: string): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    `<head><meta charset="utf-8"><title>${esc(title)}</title>`,
    "<style>html,body{margin:0;padding:0;background:#fff}svg{display:block}</style></head>",
    "<body>",
    svg.trimEnd(),
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** width and height from an SVG's root element (what htmlPage's window should be). */
export function svgSize(svg: string): { width: number; height: number } {
  const m = /<svg[^>]*\swidth="(\d+)"[^>]*\sheight="(\d+)"/.exec(svg);
  return { width: Number(m?.[1] ?? 0), height: Number(m?.[2] ?? 0) };
}
