/**
 * The page's two menus: Examples (the site's files, grouped by what they are and which buttons
 * apply to them) and the workspace's files with the imports that can be opened.
 */
import { fill, h } from "./dom.js";
import { importsOf, resolvePath } from "./paths.js";

/** A file the site carries (build.ts's sourceFiles). */
export interface SourceFile {
  readonly path: string;
  readonly group: string;
  readonly text: string;
}

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

const PROGRAM = `// A program: main(comm) runs on every simulated rank; press Run. API: comm.rank, comm.size, await comm.send(buf, peer) / comm.recv(buf, peer), allReduce(comm, buf) and the other collectives, print(...) (examples/ has more).
import { allReduce, type Comm, tensor } from "../src/index.js";
import { printer } from "./_run.js";

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const t = tensor("float32", [comm.rank, comm.rank + 1]);
  await allReduce(comm, t);
  print(\`rank \${comm.rank} of \${comm.size}:\`, t);
}
`;

const ALGORITHM = `// An algorithm: each rank's schedule of steps for one collective; press Verify (proof and tests) or Explain. API: yield step(label, [send(peer, region), recv(peer, region)], [copy(dst, src), reduce(dst, src)]), region("input" | "output" | "scratch", offset, count).
import { copy, defineAlgorithm, f, recv, region, send, step } from "../../src/schedule/dsl.js";

export const mine = defineAlgorithm({
  collective: "broadcast",
  name: "mine",
  summary: "the root sends the whole buffer to each other rank in turn",
  limits: "any size; the root sends n-1 times",
  source: "the playground's template",
  cost: { steps: f("n-1", (n) => n - 1), sent: f("(n-1)·count", (n, count) => (n - 1) * count) },
  *schedule({ rank, size, count, root, inPlace }) {
    const all = region("output", 0, count);
    if (rank !== root) {
      yield step(\`from rank \${root}\`, [recv(root, all)]);
      return;
    }
    if (!inPlace) yield step("keep my own", [], [copy(all, region("input", 0, count))]);
    for (let peer = 0; peer < size; peer++) if (peer !== root) yield step(\`to rank \${peer}\`, [send(peer, all)]);
  },
});
`;

/** The two files a new piece of work starts from, each with a one-line hint of its API. */
export const TEMPLATES: readonly SourceFile[] = [
  { path: "examples/mine.ts", group: "new", text: PROGRAM },
  { path: "examples/algorithms/mine.ts", group: "new", text: ALGORITHM },
];

/** What each group of the Examples menu is, and which buttons apply to it. */
const GROUP_LABEL: Readonly<Record<string, string>> = {
  new: "start your own: a new program (Run) or a new algorithm (Verify, Explain)",
  programs: "programs: main(comm), press Run",
  "your own algorithm": "your own algorithms: Verify, Explain (Run runs it once)",
  "built-in algorithms": "built-in algorithms: Verify, Explain (Run runs it once)",
  routines: "routines the algorithms import: open one to read or edit",
};

export function fillExamples(sources: Iterable<SourceFile>): void {
  const groups = new Map<string, SourceFile[]>();
  for (const s of sources) {
    const list = groups.get(s.group) ?? [];
    list.push(s);
    groups.set(s.group, list);
  }
  fill(
    byId<HTMLSelectElement>("examples"),
    ...[...groups].map(([group, list]) =>
      h(
        "optgroup",
        { label: GROUP_LABEL[group] ?? group },
        ...list.map((s) => h("option", { value: s.path }, s.path.replace(/^(examples|algorithms)\//, ""))),
      ),
    ),
  );
}

/** The workspace's files (the main one marked) and the imports the site carries that are not open yet. */
export function refreshFiles(
  ws: { readonly files: Readonly<Record<string, string>>; readonly main: string; readonly current: string },
  carried: (path: string) => boolean,
): void {
  const fileSel = byId<HTMLSelectElement>("file");
  fill(
    fileSel,
    ...Object.keys(ws.files).map((p) => h("option", { value: p }, `${p}${p === ws.main ? " (main)" : ""}`)),
  );
  fileSel.value = ws.current;
  const imports = new Set<string>();
  for (const [p, text] of Object.entries(ws.files)) {
    for (const spec of importsOf(text)) {
      const key = resolvePath(p, spec);
      if (key && carried(`${key}.ts`) && ws.files[`${key}.ts`] === undefined) imports.add(`${key}.ts`);
    }
  }
  fill(
    byId<HTMLSelectElement>("imports"),
    h("option", { value: "" }, `${imports.size} to open`),
    ...[...imports].map((p) => h("option", { value: p }, p)),
  );
  byId("file-note").textContent =
    ws.current === ws.main ? "" : `editing an import; Run, Verify and Explain act on ${ws.main}`;
}
