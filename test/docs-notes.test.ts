/**
 * docs/algorithms-notes.md (the hand-written comparisons appended to docs/algorithms.md): every
 * picture it shows exists and was drawn by the command printed above it (the chart's title names
 * the collective and the size the command asks for).
 */
import { existsSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ALGORITHMS_NOTES_MD } from "../src/tools/docs.js";

const notes = readFileSync(ALGORITHMS_NOTES_MD, "utf8");
const docs = new URL("../docs/", import.meta.url);

it("shows the PAT and Swing charts, each drawn by the command printed with it", () => {
  const pictures = [...notes.matchAll(/!\[[^\]]*\]\((img\/[^)]+)\)/g)].map((m) => m[1] as string);
  expect(pictures).toEqual(["img/crossover-allgather-pat.svg", "img/crossover-allreduce-swing.svg"]);
  for (const p of pictures) {
    expect(existsSync(new URL(p, docs)), p).toBe(true);
    const cmd = notes.match(new RegExp(`\\$ npx cclab model (\\w+) .*--bytes (\\w+) -o docs/${p}`));
    expect(cmd, `the command that draws ${p}`).not.toBeNull();
    const [, collective, bytes] = cmd as RegExpMatchArray;
    const size = (bytes as string).replace("K", " KiB");
    expect(readFileSync(new URL(p, docs), "utf8")).toContain(`${collective} of ${size}: alpha-beta model`);
  }
});
