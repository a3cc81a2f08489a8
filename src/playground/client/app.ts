/**
 * The playground page: a CodeMirror editor over a small workspace of files (the main one runs;
 * files it imports can be opened and edited too), Run / Verify / Explain sent to a Web Worker
 * with a time bound and a Stop button, the results drawn (viewer.ts), and Share (share.ts).
 * window.playground is a small handle for tests and scripts: the source, the workspace, the
 * last result, whether a job runs.
 */
import { javascript } from "@codemirror/lang-javascript";
import { EditorState, Prec } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { basicSetup, EditorView } from "codemirror";
import type { Semantics } from "../../sim/ops.js";
import { byId, fill, input, num } from "./dom.js";
import { draftOf, dropDraft, keepDraft, lastOpened, setLastOpened } from "./drafts.js";
import { Runner, windowRunnerAddress } from "./host.js";
import { type Ending, RunningJob, refusedMessages } from "./jobs.js";
import { fillExamples, refreshFiles, type SourceFile, TEMPLATES } from "./menus.js";
import { clearOutput, flushOutput, printed, rankPanels, showVerify } from "./panels.js";
import type { CallShape, Files, Job, Result } from "./protocol.js";
import { decodeShared, encodeShared, type Shared } from "./share.js";
import { hideTrace, move, setOnStep, show, showTraced, stepIndex } from "./viewer.js";

const g = globalThis as unknown as { CCLAB_SOURCES: SourceFile[]; playground: unknown };
// The templates first: the menu's first group.
const SOURCES = new Map([...TEMPLATES, ...g.CCLAB_SOURCES].map((s) => [s.path, s]));
/** Where jobs run: an iframe that starts their Workers, in a process of its own where the page is served (host.ts). */
const runner = new Runner();
/**
 * Where a frame cannot have a process of its own (a page opened from a file), what the site did
 * not ship (your edits, a link's program) runs in a window of its own, which has one; the site's
 * own files, unedited, run in the frame (a lesson's link runs at once, with no click to open a
 * window).
 */
const ownRunner = runner.where.isolated ? runner : new Runner(windowRunnerAddress(location));
const runnerFor = (j: Job) => (j.pristine ? runner : ownRunner);

/** The settings' fields, by id: a link sets them, and a change to one is kept in the address bar. */
const SETTINGS = ["n", "semantics", "seed", "lo", "hi", "runs", "limit", "topology"] as const;

// ---- the workspace and the editor ----

const ws = { files: {} as Record<string, string>, main: "", current: "" };

const editor = new EditorView({
  parent: byId("editor"),
  extensions: [
    basicSetup,
    javascript({ typescript: true }),
    // '{' is not closed for you: '{', Enter, '}' typed as in any editor would double the brace.
    Prec.highest(EditorState.languageData.of(() => [{ closeBrackets: { brackets: ["(", "[", "'", '"', "`"] } }])),
    EditorView.lineWrapping,
    // Ctrl-Enter runs (CodeMirror's own Mod-Enter would insert a line).
    Prec.highest(
      keymap.of([
        {
          key: "Mod-Enter",
          run: () => {
            guarded(() => startRun())();
            return true;
          },
        },
      ]),
    ),
    EditorView.updateListener.of((u) => {
      if (u.docChanged && ws.current) {
        const text = u.state.doc.toString();
        ws.files[ws.current] = text;
        // Your edit is kept in this browser (drafts.ts); one that cannot be is asked about before a switch.
        if (!loading) {
          if (keepDraft(ws.current, text, SOURCES.get(ws.current)?.text)) unsaved.delete(ws.current);
          else unsaved.add(ws.current);
        }
        keepInUrl();
      }
    }),
  ],
});

/** Files of the workspace whose text is kept nowhere else (a link's program, a draft the browser would not keep). */
const unsaved = new Set<string>();
let loading = false;

/** Shows `text`; an edit of yours (kept as a draft) or, by default, a file being opened. */
function setDoc(text: string, edit = false): void {
  loading = !edit;
  try {
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
  } finally {
    loading = false;
  }
}

function showFile(path: string): void {
  ws.current = path;
  setDoc(ws.files[path] ?? "");
  refreshFiles(ws, (p) => SOURCES.has(p));
}

/**
 * Opens a file the site carries as the workspace's only (and main) file: your kept copy of it
 * when `yours` (the Examples menu), the site's own text otherwise (a lesson's link). Asks first
 * where that would discard text kept nowhere else.
 */
function openExample(path: string, yours = false): void {
  const s = SOURCES.get(path);
  if (!s) throw new Error(`the site carries no file ${path}; the Examples menu lists those it has`);
  const lost = [...unsaved].filter((p) => ws.files[p] !== undefined);
  if (
    lost.length > 0 &&
    !window.confirm(
      `Open ${path}? ${lost.join(", ")} ${lost.length > 1 ? "are" : "is"} kept nowhere else (a shared link's program, or this browser keeps no drafts): opening another file discards ${lost.length > 1 ? "them" : "it"}. Cancel, then Share, to keep a link.`,
    )
  ) {
    byId<HTMLSelectElement>("examples").value = ws.main;
    return;
  }
  unsaved.clear();
  const draft = yours ? draftOf(path) : undefined;
  ws.files = { [path]: draft ?? s.text };
  ws.main = path;
  lastAction = undefined;
  byId<HTMLSelectElement>("examples").value = path;
  showFile(path);
  clearResults();
  setLastOpened(path);
  setStatus(
    draft === undefined
      ? `opened ${path}`
      : `opened your edited copy of ${path} (kept in this browser; Revert gives the site's)`,
  );
}

/** Adds a file the main file imports to the workspace (edits to it then take effect), and shows it. */
function openImport(path: string): void {
  if (ws.files[path] === undefined) {
    const s = SOURCES.get(path);
    if (!s) throw new Error(`the site carries no file ${path}`);
    ws.files[path] = s.text;
  }
  showFile(path);
}

// ---- results ----

function setStatus(text: string, cls: "" | "error" | "ok" = ""): void {
  const el = byId("status");
  el.textContent = text;
  el.className = cls;
}

function clearResults(): void {
  hideTrace();
  for (const id of ["verify-out", "output-out", "explain-out"]) byId(id).classList.add("hidden");
  clearOutput();
  fill(byId("verify-out"));
  byId("progress").classList.add("hidden");
}

let lastResult: Result | undefined;
let lastAction: "run" | "explain" | undefined;

function showResult(r: Result, step?: number): void {
  lastResult = r;
  const notes = r.notes.length > 0 ? `\n${r.notes.join("\n")}` : "";
  if (r.kind === "run") {
    showTraced(r.traced, step);
    const dl = r.traced.deadlocks.length;
    // A deadlock that ended the run is drawn below with its message: the status does not repeat it.
    if (r.error && dl > 0 && /DeadlockError/.test(r.error))
      setStatus(
        `the run failed: it deadlocked (the wait-for cycle and every blocked operation below)${notes}`,
        "error",
      );
    else if (r.error) setStatus(`the run failed: ${r.error}${notes}`, "error");
    else if (dl > 0)
      setStatus(`ran to the end, after ${dl} deadlock${dl > 1 ? "s" : ""} the program caught (below)${notes}`);
    else setStatus(`ran to the end: no deadlock, ${r.traced.events.length} events${notes}`, "ok");
  } else if (r.kind === "explain") {
    showTraced(r.traced, step);
    byId("explain-out").classList.remove("hidden");
    byId("explain-text").textContent = r.traced.explainText ?? "";
    setStatus(`${r.traced.title}${notes}`, r.traced.steps?.errors.length ? "error" : "");
  } else {
    showVerify(
      byId("verify-out"),
      r,
      guarded((f) => startExplain(f.replay)),
    );
    if (r.failure) setStatus(`${r.algorithm} FAILED${notes}`, "error");
    else setStatus(`${r.algorithm} verified${notes}`, "ok");
  }
}
// ---- jobs ----

let job: RunningJob | undefined;
let nextId = 1;
/** Progress messages shown since the page opened (the test reads it). */
let progressSeen = 0;

function settings() {
  return {
    n: num("n", 1, 64),
    semantics: byId<HTMLSelectElement>("semantics").value as Semantics,
    seed: num("seed", -(2 ** 31), 2 ** 31),
    lo: num("lo", 1, 64),
    hi: num("hi", 1, 64),
    runs: num("runs", 0, 1000),
    limit: num("limit", 1, 600),
    topology: input("topology").value, // topology.ts reads it, in the Worker
  };
}

function setBusy(b: boolean): void {
  for (const id of ["run", "verify", "explain"]) byId<HTMLButtonElement>(id).disabled = b;
  byId<HTMLButtonElement>("stop").disabled = !b;
}

function start(j: Job, onDone: (r: Result) => void): void {
  const s = settings();
  job?.stop("");
  clearResults();
  setBusy(true);
  setStatus(`${j.kind}: running ${j.main}…`);
  job = new RunningJob(runnerFor(j), j, s.limit, {
    print: printed,
    progress: (done, total, what) => {
      progressSeen++;
      const p = byId<HTMLProgressElement>("progress");
      p.classList.remove("hidden");
      p.max = total;
      p.value = done;
      setStatus(`verify: ${done} of ${total}: ${what}`);
    },
    end: (how: Ending) => {
      setBusy(false);
      byId("progress").classList.add("hidden");
      flushOutput();
      if ("result" in how) onDone(how.result);
      else setStatus("failed" in how ? how.failed : how.stopped, "error");
    },
  });
}

function base(kind: Job["kind"]) {
  const pristine = Object.entries(ws.files).every(([p, text]) => SOURCES.get(p)?.text === text);
  const { topology } = settings();
  return { id: nextId++, files: { ...ws.files } as Files, main: ws.main, kind, pristine, topology };
}

function guarded<A extends unknown[]>(f: (...a: A) => void): (...a: A) => void {
  return (...a) => {
    try {
      f(...a);
    } catch (e) {
      setStatus(e instanceof Error ? e.message : String(e), "error");
    }
  };
}

function startRun(step = pendingStep("run")): void {
  const s = settings();
  lastAction = "run";
  start({ ...base("run"), kind: "run", n: s.n, semantics: s.semantics, seed: s.seed }, (r) => showResult(r, step));
  // After start(), which clears the results; the worker's first line comes later.
  rankPanels(s.n);
}

function startExplain(
  call?: CallShape & { semantics?: Semantics; seed?: number },
  step = call ? undefined : pendingStep("explain"),
): void {
  // A replay runs under the failing case's semantics and seed: the controls show them.
  if (call?.semantics) byId<HTMLSelectElement>("semantics").value = call.semantics;
  if (call?.seed !== undefined) input("seed").value = String(call.seed);
  const s = settings();
  lastAction = "explain";
  const shape = call
    ? { n: call.n, count: call.count, root: call.root, segment: call.segment, inPlace: call.inPlace }
    : { n: s.n };
  start({ ...base("explain"), kind: "explain", call: shape, semantics: s.semantics, seed: s.seed }, (r) =>
    showResult(r, step),
  );
}

function startVerify(): void {
  const s = settings();
  if (s.lo > s.hi) throw new Error(`n from (${s.lo}) must not exceed to (${s.hi})`);
  lastAction = undefined;
  start({ ...base("verify"), kind: "verify", lo: s.lo, hi: s.hi, runs: s.runs, seed: s.seed }, (r) => showResult(r));
}

// ---- share ----

function shared(): Shared {
  const s = settings();
  const action = lastAction
    ? { action: lastAction, step: stepIndex() }
    : pending
      ? { action: pending.action, ...(pending.step !== undefined ? { step: pending.step } : {}) }
      : {};
  return { files: ws.files, main: ws.main, current: ws.current, ...s, ...action };
}

/**
 * What an opened link last did (Run or Explain) and the step it showed: a link's program does
 * not start by itself, so this waits for the reader's own Run or Explain, which then shows that
 * step.
 */
let pending: { action: "run" | "explain"; step?: number } | undefined;

/** The step to show after a Run or Explain the reader started: the link's, the first time. */
function pendingStep(action: "run" | "explain"): number | undefined {
  const p = pending;
  pending = undefined;
  return p?.action === action ? p.step : undefined;
}

async function share(): Promise<string> {
  const hash = await encodeShared(shared());
  const url = `${location.href.split("#")[0]}#${hash}`;
  history.replaceState(null, "", `#${hash}`);
  try {
    await navigator.clipboard.writeText(url);
    setStatus(`link copied (${url.length} characters): it holds the files, the settings and the step`, "ok");
  } catch {
    setStatus(
      `link in the address bar (${url.length} characters): it holds the files, the settings and the step`,
      "ok",
    );
  }
  return url;
}

/**
 * The address bar always holds the current state (as the TypeScript playground's does): a
 * reload or a bookmark keeps the code. Written a moment after the last change, and not before
 * the page has read the state it opened with.
 */
let keeping = false;
let keepTimer: number | undefined;
function keepInUrl(): void {
  if (!keeping) return;
  if (keepTimer !== undefined) clearTimeout(keepTimer);
  keepTimer = window.setTimeout(() => {
    keepTimer = undefined;
    let state: Shared;
    try {
      state = shared();
    } catch {
      return; // a setting is being typed (not a number yet): the next change writes it
    }
    void encodeShared(state).then((hash) => history.replaceState(null, "", `#${hash}`));
  }, 300);
}

async function restore(): Promise<void> {
  const st = await decodeShared(location.hash);
  if (!st) {
    const last = lastOpened();
    openExample(last && SOURCES.has(last) ? last : "examples/send_recv.ts", true);
    return;
  }
  if (st.example) openExample(st.example);
  else if (st.files && st.main) {
    ws.files = { ...st.files };
    ws.main = st.main;
    for (const [p, text] of Object.entries(st.files)) if (text !== (draftOf(p) ?? SOURCES.get(p)?.text)) unsaved.add(p);
    showFile(st.current && st.files[st.current] !== undefined ? st.current : st.main);
  } else openExample("examples/send_recv.ts");
  for (const id of SETTINGS) if (st[id] !== undefined) input(id).value = String(st[id]);
  if (st.example) {
    // The site's own program, with settings from the link (the lessons of docs/teaching.md): it
    // runs as the link says, since nothing in it came from the link.
    if (st.action === "run") startRun(st.step);
    else if (st.action === "explain") startExplain(undefined, st.step);
    return;
  }
  // A link's own program runs only when the reader says so.
  if (st.action) pending = { action: st.action, ...(st.step !== undefined ? { step: st.step } : {}) };
  const n = Object.keys(ws.files).length;
  setStatus(
    `opened a shared program (${n} file${n > 1 ? "s" : ""}, ${ws.main} runs): nothing has run yet; read it, then press ${st.action === "explain" ? "Explain" : "Run"}`,
  );
}

// ---- wiring ----

fillExamples(SOURCES.values());
byId("examples").addEventListener(
  "change",
  guarded(() => {
    // A new history entry for the example opened, so Back returns to the one before (popstate
    // below) instead of leaving the page; keepInUrl then writes the entry's whole state.
    const path = byId<HTMLSelectElement>("examples").value;
    history.pushState(null, "", `#example=${path}`);
    openExample(path, true);
    keepInUrl();
  }),
);
// Back and Forward: the entry's example with your edits (kept in this browser), or its link.
window.addEventListener("popstate", () => {
  void decodeShared(location.hash)
    .then((st) => (st?.example && !st.files ? openExample(st.example, true) : restore()))
    .catch((e) => setStatus(String(e), "error"));
});
byId("revert").addEventListener(
  "click",
  guarded(() => {
    const original = SOURCES.get(ws.current)?.text;
    if (original === undefined) throw new Error(`the site carries no ${ws.current} to revert to`);
    if (!window.confirm(`Discard your edits to ${ws.current} and show the site's text?`)) return;
    dropDraft(ws.current);
    unsaved.delete(ws.current);
    setDoc(original);
    setStatus(`${ws.current}: the site's text again`);
  }),
);
byId("file").addEventListener(
  "change",
  guarded(() => showFile(byId<HTMLSelectElement>("file").value)),
);
byId("imports").addEventListener(
  "change",
  guarded(() => {
    const v = byId<HTMLSelectElement>("imports").value;
    if (v) openImport(v);
  }),
);
byId("run").addEventListener(
  "click",
  guarded(() => startRun()),
);
byId("verify").addEventListener("click", guarded(startVerify));
byId("explain").addEventListener(
  "click",
  guarded(() => startExplain()),
);
byId("stop").addEventListener("click", () => {
  if (job?.running) job.stop(`stopped by you after ${((performance.now() - job.started) / 1000).toFixed(1)} s`);
});
byId("share").addEventListener(
  "click",
  guarded(() => void share()),
);
byId("step").addEventListener("input", () => show(Number(input("step").value)));
byId("prev").addEventListener("click", () => move(-1));
byId("next").addEventListener("click", () => move(1));
document.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
    // The editor runs it itself (its keymap above).
    if ((e.target as HTMLElement | null)?.closest(".cm-editor")) return;
    guarded(() => startRun())();
  } else if (e.altKey && e.key === "ArrowRight") move(1);
  else if (e.altKey && e.key === "ArrowLeft") move(-1);
  else return;
  e.preventDefault();
});
setOnStep(() => keepInUrl());
for (const id of SETTINGS) byId(id).addEventListener("change", keepInUrl);

const handle = {
  ready: false,
  /** The text of the file shown in the editor. */
  getSource: () => editor.state.doc.toString(),
  /** Replaces the shown file's text (as typing would). */
  setSource: (text: string) => setDoc(text, true),
  open: (path: string) => openExample(path),
  openImport: (path: string) => openImport(path),
  workspace: () => ({ files: { ...ws.files }, main: ws.main, current: ws.current }),
  busy: () => job?.running ?? false,
  /** Where your programs run: runners replaced since the page opened, whether it has a process of its own, whether it is a window. */
  runner: () => ({ replaced: ownRunner.replaced, isolated: ownRunner.where.isolated, window: ownRunner.where.window }),
  progressSeen: () => progressSeen,
  invalidSeen: refusedMessages,
  lastResult: () => lastResult,
  share,
  step: () => stepIndex(),
};
g.playground = handle;

restore()
  .catch((e: unknown) => {
    openExample("examples/send_recv.ts");
    const why = e instanceof Error ? e.message : String(e);
    setStatus(
      `${why.startsWith("this link") ? why : `this link could not be opened: ${why}`}. Meanwhile the first example is open (examples/send_recv.ts).`,
      "error",
    );
  })
  .finally(() => {
    handle.ready = true;
    keeping = true;
    document.body.dataset.ready = String(Math.round(performance.now()));
  });
