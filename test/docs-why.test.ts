/**
 * docs/why-these-algorithms.md: every picture it shows exists and is the `-o` file of a command
 * printed on the page, and every command printed on the page is followed by its output (the
 * machine it ran on), so no figure stands without the command that makes it.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";

const page = readFileSync(new URL("../docs/why-these-algorithms.md", import.meta.url), "utf8");
const docs = new URL("../docs/", import.meta.url);

it("shows only pictures that exist, each drawn by a command printed on the page", () => {
  const pictures = [...page.matchAll(/!\[[^\]]*\]\((img\/[^)]+)\)/g)].map((m) => m[1] as string);
  expect(pictures.length).toBeGreaterThanOrEqual(8);
  for (const p of pictures) {
    expect(existsSync(new URL(p, docs)), p).toBe(true);
    expect(page, `the command that draws ${p}`).toMatch(
      new RegExp(`\\$ npx cclab model [^\\n]* -o docs/${p.replace(/[.]/g, "\\.")}\\n`),
    );
  }
});

it("prints each command's output beside it: the topology it ran on and a table or a time", () => {
  const blocks = [...page.matchAll(/```console\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  expect(blocks.length).toBeGreaterThanOrEqual(10);
  for (const b of blocks) {
    const [cmd, ...out] = b.trimEnd().split("\n");
    expect(cmd, b.slice(0, 80)).toMatch(/^\$ npx cclab model \w+ --topology \S+/);
    const topology = (cmd as string).match(/--topology (\S+)/)?.[1] as string;
    const family = topology.split(/[:,]/)[0] as string;
    expect(out.join("\n"), cmd).toContain(`${family}`);
    expect(out.join("\n"), cmd).toMatch(/│|^time /m);
  }
});
