/**
 * Text from files shown to people: names read from a topology file (a node's name, a link's
 * kind) reach a terminal, an SVG, an HTML page and JSON. Control characters (C0, DEL, C1) and the
 * invisible bidirectional overrides are written as escapes, so a name can neither drive the
 * terminal (set its title, clear it) nor reorder what is shown around it.
 */

/** Control characters, bidi embeddings/overrides/isolates, line and paragraph separators, the BOM. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** `s` with every control character written as an escape (`\x1b`, `\u202e`); other text as is. */
export function escapeControl(s: string): string {
  return s.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
