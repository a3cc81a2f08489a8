/** "did you mean": the closest name by edit distance, for typos at the CLI and API boundary. */

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = row[j] as number;
      row[j] = next;
    }
  }
  return row[b.length] as number;
}

/** The candidate closest to `name` (case-insensitive), if it is within a third of the name's length (at least 2 edits). */
export function suggest(name: string, candidates: readonly string[]): string | undefined {
  const n = name.toLowerCase();
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(n.length / 3)) + 1;
  for (const c of candidates) {
    const d = distance(n, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}
