/**
 * Input files named on the command line (--topology file:, --placement file:): bounded while
 * read, refused by type (a FIFO, a device, a directory, a socket) at once with the file's name,
 * a UTF-8 byte-order mark accepted, a number out of range named as such, and the names a file
 * brings (nodes, link kinds, the topology's name) shown with control characters escaped in every
 * output: the terminal, JSON, SVG and HTML.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { escapeControl } from "../src/core/text.js";
import { readInputFile } from "../src/tools/input-file.js";

/** The paths input-file.ts opens, in order; `beforeOpen` runs just before each open (a swap). */
const opened: string[] = [];
let beforeOpen: (() => void) | undefined;
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    openSync: (...args: Parameters<typeof fs.openSync>) => {
      opened.push(String(args[0]));
      beforeOpen?.();
      return fs.openSync(...args);
    },
  };
});

import { parseTopology, placeRanks } from "../src/model/network/index.js";
import { underLoad } from "./support/load.js";

const dir = mkdtempSync(join(tmpdir(), "cclab-inputs-"));
const fifo = join(dir, "fifo");
spawnSync("mkfifo", [fifo]);

/** The real command, in a process of its own: a read that never ends cannot stop the test runner. */
function cclab(...args: string[]): { status: number | null; out: string; err: string; seconds: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: r.status, out: r.stdout, err: r.stderr, seconds: (performance.now() - t0) / 1000 };
}

const model = ["model", "allreduce", "--algorithm", "ring", "-n", "2"];
const good = join(dir, "good.json");
writeFileSync(
  good,
  JSON.stringify({
    nodes: [
      { name: "h0", kind: "host" },
      { name: "h1", kind: "host" },
      { name: "s", kind: "switch" },
    ],
    links: [
      { from: "h0", to: "s" },
      { from: "h1", to: "s" },
    ],
  }),
);

describe("an input file that is not a regular file is refused at once, by type, naming it", () => {
  // Each answers in about the start-up time of the command (1-2 s); before, /dev/zero was read
  // until memory ran out and a FIFO blocked open() until killed.
  it.each([
    ["--topology", "/dev/zero", "a device, not a regular file: copy it into one"],
    ["--topology", fifo, "a FIFO \\(named pipe\\), not a regular file: save it to a file first"],
    ["--topology", dir, "a directory, not a regular file: give the JSON file inside it"],
    ["--placement", "/dev/zero", "a device, not a regular file: copy it into one"],
    ["--placement", fifo, "a FIFO \\(named pipe\\), not a regular file: save it to a file first"],
  ])("%s file:%s", (flag, path, kind) => {
    const args = flag === "--topology" ? [flag, `file:${path}`] : ["--topology", `file:${good}`, flag, `file:${path}`];
    const r = cclab(...model, ...args);
    expect(r.status).toBe(1);
    expect(r.err).toMatch(new RegExp(`${flag}: ${path} is ${kind}`));
    expect(r.seconds).toBeLessThan(underLoad(20));
  });

  it("a Unix-domain socket is named as one", async () => {
    const sock = join(dir, "sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      expect(() => parseTopology(`file:${sock}`, 2)).toThrow(
        `--topology: ${sock} is a socket, not a regular file: copy what it serves into one`,
      );
    } finally {
      server.close();
    }
  });

  it("a regular file past the limit is refused while read, though stat() says 0 bytes (/proc)", () => {
    const big = join(dir, "big.json");
    // A sparse file of 65 MiB: the limit is 64 MiB.
    spawnSync("truncate", ["-s", "65M", big]);
    expect(() => parseTopology(`file:${big}`, 2)).toThrow(`--topology: ${big} is larger than the 64 MiB`);
    // /proc files are regular with size 0: read, bounded, and here not JSON.
    expect(() => parseTopology("file:/proc/self/status", 2)).toThrow("/proc/self/status: not valid JSON");
    expect(statSync("/proc/self/maps").size).toBe(0);
    expect(() => readInputFile("/proc/self/maps", { what: "map", maxBytes: 16, fail: (d) => new Error(d) })).toThrow(
      "/proc/self/maps is larger than the 16 bytes a map may have",
    );
  });

  it("a file's type is checked before it is opened: a device is never opened", () => {
    opened.length = 0;
    expect(() => readInputFile("/dev/zero", { what: "map", maxBytes: 16, fail: (d) => new Error(d) })).toThrow(
      "/dev/zero is a device",
    );
    expect(opened).not.toContain("/dev/zero");
    readInputFile(good, { what: "map", maxBytes: 1 << 20, fail: (d) => new Error(d) });
    expect(opened).toContain(good);
  });

  it("a file swapped for another between the check and the open is refused", () => {
    const file = join(dir, "swapped.json");
    writeFileSync(file, "{}");
    const other = join(dir, "other.json");
    writeFileSync(other, "[]");
    beforeOpen = () => renameSync(other, file);
    try {
      expect(() => readInputFile(file, { what: "map", maxBytes: 1 << 20, fail: (d) => new Error(d) })).toThrow(
        `${file} changed while it was opened (another file took its place)`,
      );
    } finally {
      beforeOpen = undefined;
    }
  });
});

describe("what the file says, plainly", () => {
  it("a UTF-8 byte-order mark is accepted, in a topology and a placement file", () => {
    const bom = join(dir, "bom.json");
    writeFileSync(bom, `\ufeff${readFileSync(good, "utf8")}`);
    expect(parseTopology(`file:${bom}`, 2).hosts).toBe(2);
    const p = join(dir, "bom-placement.json");
    writeFileSync(p, "\ufeff[1, 0]");
    expect([...placeRanks(parseTopology(`file:${good}`, 2), 2, `file:${p}`)]).toEqual([1, 0]);
  });

  it("bytes that are not UTF-8 are named as such", () => {
    const latin1 = join(dir, "latin1.json");
    writeFileSync(latin1, Buffer.from([0x7b, 0xe9, 0x7d]));
    expect(() => parseTopology(`file:${latin1}`, 2)).toThrow(
      `${latin1} is not UTF-8 text: save the topology file as UTF-8`,
    );
  });

  it("[1e400, ...] in a placement file is a number out of range, not 'null'", () => {
    const p = join(dir, "huge.json");
    writeFileSync(p, "[1e400, 0]");
    expect(() => placeRanks(parseTopology(`file:${good}`, 2), 2, `file:${p}`)).toThrow(
      `--placement: ${p}: rank 0: a number out of range (past 1.8e308, JSON reads it as Infinity)`,
    );
  });
});

describe("names from a topology file are shown with control characters escaped", () => {
  const evil = join(dir, "evil.json");
  const title = "\u001b]0;pwned\u0007";
  const clear = "\u001b[2J";
  const csi = "\u009b31m";
  writeFileSync(
    evil,
    JSON.stringify({
      name: `t${title}`,
      nodes: [
        { name: `h${clear}0`, kind: "host" },
        { name: "h1", kind: "host" },
        { name: `s\u202e`, kind: "switch" },
      ],
      links: [
        { from: `h${clear}0`, to: `s\u202e`, kind: `nv${csi}` },
        { from: "h1", to: `s\u202e` },
      ],
    }),
  );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

  it("escapeControl writes C0, DEL, C1 and bidi controls (the Arabic letter mark too) as escapes, unambiguously", () => {
    expect(escapeControl(`a${title}b${csi}\u202e\u007f\u061c`)).toBe("a\\x1b]0;pwned\\x07b\\x9b31m\\u202e\\x7f\\u061c");
    // A backslash typed in a name is doubled: "\\x1b" typed as four characters and a real ESC differ.
    expect(escapeControl("\\x1b")).toBe("\\\\x1b");
    expect(escapeControl("\\x1b")).not.toBe(escapeControl("\x1b"));
    expect(escapeControl("h0 ✓ π")).toBe("h0 ✓ π");
  });

  it("in the topology itself: its name, node names and link kinds", () => {
    const t = parseTopology(`file:${evil}`, 2);
    expect(t.name).toBe("t\\x1b]0;pwned\\x07");
    expect(t.nodeName(0)).toBe("h\\x1b[2J0");
    expect(t.nodeName(2)).toBe("s\\u202e");
    expect(t.links.kind[0]).toBe("nv\\x9b31m");
  });

  it("on the terminal, in JSON, in the SVG and the HTML heat map", () => {
    const text = cclab(...model, "--topology", `file:${evil}`);
    expect(text.status).toBe(0);
    expect(text.out).toContain("h\\x1b[2J0");
    expect(text.out).toContain("nv\\x9b31m");
    expect(text.out).toContain("t\\x1b]0;pwned\\x07");
    expect(text.out).not.toMatch(raw);
    const json = cclab(...model, "--topology", `file:${evil}`, "--json");
    expect(json.status).toBe(0);
    expect(json.out).not.toMatch(raw);
    // JSON escapes C0 itself; the C1 CSI and the bidi override it leaves raw.
    expect(JSON.stringify(JSON.parse(json.out))).not.toMatch(/[\u009b\u202e]/);
    for (const ext of ["svg", "html"]) {
      const file = join(dir, `heat.${ext}`);
      const r = cclab(...model, "--topology", `file:${evil}`, "-o", file);
      expect(r.status).toBe(0);
      const page = readFileSync(file, "utf8");
      expect(page).toContain("h\\x1b[2J0");
      expect(page).not.toMatch(raw);
    }
  });

  it("in error messages too", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify({ nodes: [{ name: "h0", kind: "host" }], links: [{ from: "h0", to: `x${clear}` }] }),
    );
    expect(() => parseTopology(`file:${bad}`, 1)).toThrow("no node named 'x\\x1b[2J'");
  });
});
