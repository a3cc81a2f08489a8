/** The playground's one page: its skeleton and styles (the script, assets/playground.js, fills it in). */

const CSS = `
*{box-sizing:border-box}
html,body{height:100%}
body{margin:0;font:14px/1.4 Helvetica,Arial,sans-serif;color:#111;background:#fff;display:flex;flex-direction:column}
header{padding:6px 12px;border-bottom:1px solid #ddd;display:flex;flex-wrap:wrap;gap:6px 12px;align-items:center}
header h1{font-size:16px;margin:0 8px 0 0}
header label{display:flex;gap:4px;align-items:center;font-size:13px}
header input[type=number]{width:4.5em}
header button{font-size:13px;padding:3px 10px}
button.primary{font-weight:bold}
#stop{color:#b00}
#stop:disabled{color:#999}
#counterexample{white-space:pre-wrap}
#layout{flex:1;display:flex;min-height:0}
#left{flex:0 0 46%;display:flex;flex-direction:column;border-right:1px solid #ddd;min-width:0}
#files{display:flex;gap:6px;align-items:center;padding:4px 8px;border-bottom:1px solid #eee;font-size:13px;flex-wrap:wrap}
#editor{flex:1;min-height:0;overflow:auto}
#editor .cm-editor{height:100%}
#right{flex:1;overflow:auto;padding:8px 12px;min-width:0}
#status{font-size:13px;color:#333;margin:2px 0 8px;white-space:pre-wrap}
#status.error{color:#b00}
#status.ok{color:#176b17}
progress{width:260px;vertical-align:middle}
h2{font-size:15px;margin:10px 0 4px}
pre{font:12px/1.35 Menlo,Consolas,"DejaVu Sans Mono",monospace;background:#fafafa;border:1px solid #eee;padding:6px;overflow:auto;margin:4px 0}
#ranks{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:6px}
#ranks pre{margin:0;max-height:220px}
#ranks h3{font-size:12px;margin:0;color:#555}
.stepbar{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin:4px 0}
#step{width:260px}
#step-text{font-weight:bold}
#diagram{display:block;width:100%;border:1px solid #ddd}
#deadlock svg{max-width:100%;height:auto}
#deadlock pre{white-space:pre-wrap}
table.cells{border-collapse:collapse;font:12px/1.25 Menlo,Consolas,"DejaVu Sans Mono",monospace}
table.cells th{background:#f4f4f4;font-weight:normal;padding:2px 5px;border:1px solid #ddd;white-space:nowrap}
table.cells td{padding:2px 5px;border:1px solid #ddd;vertical-align:top}
table.cells td.changed{outline:2px solid #d62728;outline-offset:-2px}
ol.ops{font:12px/1.35 Menlo,Consolas,"DejaVu Sans Mono",monospace;padding-left:0;list-style:none;margin:4px 0}
.failure{border-left:4px solid #d62728;padding-left:8px}
.hidden{display:none}
footer{font-size:12px;color:#555;padding:4px 12px;border-top:1px solid #ddd}
#runner{position:absolute;width:0;height:0;border:0;visibility:hidden}
`;

/**
 * The page's Content-Security-Policy: scripts only from the site's own files, never inline (an
 * element or attribute that slipped into the page cannot run), and no eval: the user's program
 * runs in the runner's Worker, not here. 'wasm-unsafe-eval' for Graphviz. Frames: the runner
 * only (runner.html beside the page, or by the other loopback name where --serve serves it).
 * Inline styles are allowed (the diagrams carry theirs).
 */
export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "frame-src 'self' http://127.0.0.1:* http://localhost:*",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join("; ");

/**
 * The runner's policy (runner.html): its own scripts, and the Worker it starts from a Blob, which
 * inherits this policy and evaluates the user's program ('unsafe-eval'); nothing else.
 */
export const RUNNER_CSP = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-eval'",
  "worker-src blob:",
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join("; ");

/**
 * The runner's document: a line saying what it is (seen where it is a window of its own; the
 * frame is hidden), and two scripts (the Worker's source, then runner.ts).
 */
export function runnerHtml(): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    `<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${RUNNER_CSP}"><title>cclab playground: runs your programs</title></head>`,
    "<body>",
    "<p>This window runs the cclab playground&#39;s programs in a process of its own, so that a program that runs out of memory ends this window, not the page. It closes when the page does; closing it stops the program that runs.</p>",
    '<script src="assets/worker.js"></script>',
    '<script src="assets/runner.js"></script>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** The page; `nranks` is the number of simulated ranks it starts with (a link may say another). */
export function playgroundHtml(nranks = 4): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    `<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${PLAYGROUND_CSP}">`,
    '<meta name="viewport" content="width=device-width"><title>cclab playground</title>',
    `<style>${CSS}</style></head>`,
    "<body>",
    "<header>",
    "<h1>cclab playground</h1>",
    '<label>Examples <select id="examples"></select></label>',
    `<label title="simulated ranks">n <input id="n" type="number" min="1" max="64" value="${nranks}"></label>`,
    '<label title="the machine, in cclab model\'s syntax (ring[:N], torus:AxB[xC...], mesh:AxB[xC...]): Run and Explain give an algorithm that reads it its shape; blank, the flat rank line">topology <input id="topology" type="text" maxlength="100" size="9" placeholder="torus:4x4" spellcheck="false"></label>',
    '<label>semantics <select id="semantics"><option>nccl</option><option>mpi-eager</option><option>buffered</option></select></label>',
    '<label title="the simulator\'s interleaving seed">seed <input id="seed" type="number" value="1"></label>',
    '<button id="run" class="primary" title="Ctrl-Enter">Run</button>',
    '<button id="verify" title="proof for n = from..to, then property tests">Verify</button>',
    '<label title="the static proof\'s sizes">n from <input id="lo" type="number" min="1" max="64" value="1"></label>',
    '<label>to <input id="hi" type="number" min="1" max="64" value="16"></label>',
    '<label title="property-test cases">cases <input id="runs" type="number" min="0" max="1000" value="25"></label>',
    '<button id="explain" title="explain\'s step table at n">Explain</button>',
    '<button id="stop" disabled>Stop</button>',
    '<label title="seconds a job may run before the page stops it">limit <input id="limit" type="number" min="1" max="600" value="10"> s</label>',
    '<button id="share" title="copy a link to this program, its settings and step">Share</button>',
    "</header>",
    '<div id="layout">',
    '<div id="left">',
    '<div id="files"><label>file <select id="file"></select></label>',
    '<label>open an import <select id="imports"></select></label>',
    '<button id="revert" title="discard your edited copy of this file (kept in this browser) and show the site\'s text">Revert</button>',
    '<span id="file-note"></span></div>',
    '<div id="editor"></div>',
    "</div>",
    '<div id="right">',
    '<div id="status">loading…</div>',
    '<progress id="progress" class="hidden" max="1" value="0"></progress>',
    '<section id="verify-out" class="hidden"></section>',
    '<section id="trace-out" class="hidden">',
    '<h2 id="trace-title"></h2>',
    '<div id="verdict"></div>',
    '<div id="deadlock"></div>',
    '<div class="stepbar"><button id="prev" title="previous step (Alt-←)">‹</button>',
    '<input id="step" type="range" min="0" max="0" value="0" aria-label="step">',
    '<button id="next" title="next step (Alt-→)">›</button> <span id="step-text"></span></div>',
    '<svg id="diagram" xmlns="http://www.w3.org/2000/svg" font-family="Helvetica, Arial, sans-serif"></svg>',
    '<div id="side"></div>',
    "</section>",
    '<section id="output-out" class="hidden"><h2>printed output, per rank</h2><div id="ranks"></div><pre id="console" class="hidden"></pre></section>',
    '<section id="explain-out" class="hidden"><h2>cclab explain</h2><pre id="explain-text"></pre></section>',
    "</div>",
    "</div>",
    "<footer>Limits: only the simulator runs here (no MPI, no NCCL, no GPU); your code runs in a Web Worker with a time bound (limit) and a Stop button, so a program that loops forever never freezes this tab; served by cclab playground --serve, that Worker has a process of its own, so a program that exhausts its memory ends that process, not this tab (opened from a file it shares this tab's); its buffers may hold 256 MiB each and 1 GiB in all, and each rank's printed output keeps its first and last 500 lines. A shared link's program runs only when you press Run. Nothing leaves the page: Share puts the files in the link itself.</footer>",
    '<script src="assets/sources.js"></script>',
    '<script src="assets/playground.js"></script>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
