/**
 * docs/ is a guide: every page under docs/ (docs/*.md; docs/bench and docs/gpu-runs hold raw data)
 * says in its first lines what kind of page it is, for whom and what for ("> Tutorial, for
 * teachers: ..."), and docs/README.md, the guide's front page, lays out one path per kind of reader
 * (tutorial, how-tos, reference, explanations, in that order) that together reach every page, each
 * link pointing at a page of that kind written for that reader. The README's index names every
 * page, one line each.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blocksOf } from "../src/tools/docs-check.js";

const docs = new URL("../docs/", import.meta.url);
/** A page's text; "" for one that is not there (the tests then say what it lacks). */
const read = (name: string) => (existsSync(new URL(name, docs)) ? readFileSync(new URL(name, docs), "utf8") : "");

/** The kinds of page (Diátaxis), as the guide names them in its paths. */
const KINDS = ["Tutorial", "How-to", "Reference", "Explanation"] as const;
type Kind = (typeof KINDS)[number];

/** The readers, as the purpose lines and the guide's paths name them. */
const READERS = {
  algorithms: "people studying and changing algorithms",
  differential: "people differential-testing against MPI and NCCL",
  teachers: "teachers",
} as const;
type Reader = keyof typeof READERS;

/** "> Kind[ and kind], for readers: what for." within the first five lines. */
const PURPOSE =
  /^> (Index|Tutorial|How-to|Reference|Explanation)(?: and (tutorial|how-to|reference|explanation))?, for ([^:]+): \S/;

interface Purpose {
  readonly kinds: readonly string[];
  readonly readers: readonly (Reader | "everyone")[];
}

/** A page's purpose line, parsed; undefined (with why) when its first lines have none. */
function purposeOf(text: string): Purpose | string {
  const lines = text.split("\n").slice(0, 5);
  const line = lines.find((l) => l.startsWith("> "));
  if (!line) return "no purpose line ('> Kind, for whom: what for.') in its first 5 lines";
  const m = PURPOSE.exec(line);
  if (!m)
    return `purpose line '${line}' is not '> Tutorial|How-to|Reference|Explanation[ and kind], for whom: what for.'`;
  const kinds = [m[1] as string, ...(m[2] ? [(m[2][0] as string).toUpperCase() + m[2].slice(1)] : [])];
  const who = m[3] as string;
  const readers: (Reader | "everyone")[] = (Object.keys(READERS) as Reader[]).filter((r) => who.includes(READERS[r]));
  if (/\beveryone\b/.test(who)) readers.push("everyone");
  if (readers.length === 0)
    return `purpose line names no reader: '${who}' (use ${Object.values(READERS).join(", ")} or everyone)`;
  return { kinds, readers };
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

const pages = readdirSync(docs)
  .filter((f) => f.endsWith(".md") && f !== "README.md")
  .sort();

interface Path {
  readonly reader: Reader;
  readonly kinds: readonly { kind: string; links: readonly string[] }[];
}

/** The guide's paths: each "## For <reader>" and its "### N. Kind" lists of links. */
function pathsOf(guide: string): Path[] {
  const out: Path[] = [];
  let current: { reader: Reader; kinds: { kind: string; links: string[] }[] } | undefined;
  for (const line of guide.split("\n")) {
    const h2 = /^## For (.*)$/.exec(line);
    if (h2) {
      const reader = (Object.keys(READERS) as Reader[]).find((r) => READERS[r] === h2[1]);
      if (!reader) throw new Error(`docs/README.md: '## For ${h2[1]}' is none of the three readers`);
      current = { reader, kinds: [] };
      out.push(current);
      continue;
    }
    const h3 = /^### \d+\. (.*)$/.exec(line);
    if (h3 && current) {
      current.kinds.push({ kind: h3[1] as string, links: [] });
      continue;
    }
    if (line.startsWith("- ") && current && current.kinds.length > 0) {
      for (const m of line.matchAll(/\]\(([^)]+)\)/g))
        current.kinds[current.kinds.length - 1]?.links.push(m[1] as string);
    }
  }
  return out;
}

describe("every page under docs/ says what it is for", () => {
  it("the purpose line is parsed as the guide reads it", () => {
    expect(purposeOf("# T\n\n> Tutorial, for teachers: three lessons.\n")).toEqual({
      kinds: ["Tutorial"],
      readers: ["teachers"],
    });
    expect(
      purposeOf("# T\n\n> Reference and explanation, for people differential-testing against MPI and NCCL: x\n"),
    ).toEqual({ kinds: ["Reference", "Explanation"], readers: ["differential"] });
    expect(purposeOf("# T\n\nSome text.\n")).toMatch(/no purpose line/);
    expect(purposeOf("# T\n\n> Notes, for teachers: x\n")).toMatch(/is not/);
    expect(purposeOf("# T\n\n> Tutorial, for students: x\n")).toMatch(/names no reader/);
    expect(slug("5. Break it: what a failure looks like")).toBe("5-break-it-what-a-failure-looks-like");
    expect(slug("Performance: `cclab bench`")).toBe("performance-cclab-bench");
  });
  for (const page of [...pages, "README.md"]) {
    it(page, () => {
      const p = purposeOf(read(page));
      expect(p, `docs/${page}`).toBeTypeOf("object");
      expect((p as Purpose).kinds.includes("Index"), `docs/${page}: only docs/README.md is the index`).toBe(
        page === "README.md",
      );
    });
  }
});

describe("docs/README.md is the guide: one path per reader, reaching every page", () => {
  const paths = pathsOf(read("README.md"));

  it("has the three readers' paths, each tutorial, how-to, reference, explanation in that order", () => {
    expect(paths.map((p) => p.reader)).toEqual(Object.keys(READERS));
    for (const p of paths) {
      expect(
        p.kinds.map((k) => k.kind),
        p.reader,
      ).toEqual(["Tutorial", "How-to", "Reference", "Explanation"]);
      for (const k of p.kinds) expect(k.links.length, `${p.reader}: ${k.kind} lists no page`).toBeGreaterThan(0);
    }
  });

  it("every link goes to a page of that kind, for that reader, and to a heading it has", () => {
    const bad: string[] = [];
    for (const p of paths) {
      for (const k of p.kinds) {
        for (const link of k.links) {
          const [file, anchor] = link.split("#") as [string, string | undefined];
          if (!pages.includes(file)) {
            bad.push(`${p.reader}/${k.kind}: ${link}: no page docs/${file}`);
            continue;
          }
          const text = read(file);
          const purpose = purposeOf(text);
          if (typeof purpose === "string") continue; // the test above names it
          if (!purpose.kinds.includes(k.kind as Kind))
            bad.push(`${p.reader}/${k.kind}: ${file} says it is ${purpose.kinds.join(" and ")}`);
          if (!purpose.readers.includes(p.reader) && !purpose.readers.includes("everyone"))
            bad.push(`${p.reader}/${k.kind}: ${file} is not written for ${READERS[p.reader]}`);
          const headings = text
            .split("\n")
            .filter((l) => /^#{1,6} /.test(l))
            .map((l) => slug(l.replace(/^#+ /, "")));
          if (anchor !== undefined && !headings.includes(anchor))
            bad.push(`${link}: ${file} has no heading #${anchor}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it("every page under docs/ is on at least one path", () => {
    const linked = new Set(paths.flatMap((p) => p.kinds.flatMap((k) => k.links.map((l) => l.split("#")[0]))));
    expect(pages.filter((f) => !linked.has(f))).toEqual([]);
  });
});

const README = new URL("../README.md", import.meta.url).pathname;

describe("the README's costs", () => {
  it("every command of the tour has its measured time and load in 'What each command costs'", () => {
    const readme = readFileSync(README, "utf8");
    const table = readme.split(/^## What each command costs$/m)[1]?.split(/^## /m)[0] ?? "";
    const timed = new Map<string, string[]>();
    for (const row of table.split("\n").filter((l) => l.startsWith("| `"))) {
      const cells = row.split(" | ").map((c) => c.replace(/^\|\s*|\s*\|$/g, ""));
      timed.set((cells[0] as string).replace(/^`|`$/g, ""), cells.slice(1));
    }
    const commands = blocksOf(README).flatMap((b) => b.commands.map((c) => `npx ${c.command}`));
    expect(commands.length).toBeGreaterThan(10);
    const untimed = commands.filter((c) => !timed.has(c));
    expect(untimed, "add a row: | `command` | time | load |").toEqual([]);
    for (const c of commands) {
      const [time, load] = timed.get(c) ?? [];
      expect(time, c).toMatch(/^\d+(\.\d)? s$/);
      expect(load, c).toMatch(/^\d+(\.\d)?$/);
    }
  });
});

describe("the README's index", () => {
  const readme = readFileSync(README, "utf8");
  const section = readme.split(/^## The docs$/m)[1]?.split(/^## /m)[0] ?? "";

  it("lists every page under docs/ and the guide, one line each", () => {
    const items = section.split("\n").filter((l) => l.startsWith("- "));
    const listed = items.flatMap((l) =>
      [...l.matchAll(/\]\(docs\/([^)#]+)\)/g)].map((m) => m[1] as string).slice(0, 1),
    );
    expect([...listed].sort()).toEqual([...pages, "README.md"].sort());
    // one line each: an item is never continued on the next line
    const lines = section.split("\n");
    const continued = lines.filter((l, i) => i > 0 && /^\s+\S/.test(l) && (lines[i - 1] ?? "").startsWith("- "));
    expect(continued).toEqual([]);
  });
});
