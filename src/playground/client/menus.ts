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

/** What each group of the Examples menu is, and which buttons apply to it. */
const GROUP_LABEL: Readonly<Record<string, string>> = {
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
