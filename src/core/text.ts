/**
 * Text from files shown to people: names read from a topology file (a node's name, a link's
 * kind) reach a terminal, an SVG, an HTML page and JSON. Control characters (C0, DEL, C1) and the
 * invisible bidirectional marks and overrides are written as escapes, so a name can neither drive
 * the terminal (set its title, clear it) nor reorder what is shown around it; a backslash is
 * doubled, so an escape typed in a name (the four characters \x1b) reads apart from a real one.
 */

/**
 * Control characters, the Arabic letter mark and bidi marks/embeddings/overrides/isolates, line
 * and paragraph separators, the BOM; and the backslash, the escapes' own sign.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\\]/g;

/** `s` with every control character written as an escape (`\x1b`, `\u202e`), `\` as `\\`; other text as is. */
export function escapeControl(s: string): string {
  return s.replace(UNSAFE, (c) => {
    if (c === "\\") return "\\\\";
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
