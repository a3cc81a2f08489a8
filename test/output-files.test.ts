/**
 * What the command line writes: playground -o's folder is checked before any mkdir (a place that
 * cannot hold a folder, /proc/x, answers at once instead of spinning in a recursive mkdir), a
 * non-empty folder or a symbolic link is named and refused unless --force; --nccl-tuner refuses an
 * empty path and names itself and the file when the file cannot be written.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkOutputFile, prepareOutputDir, writeOutputFile } from "../src/cli/output-files.js";
import { underLoad } from "./support/load.js";

const root = mkdtempSync(join(tmpdir(), "cclab-output-"));

/** The real command in a process of its own (a spinning mkdir cannot stop the test runner). */
function cclab(...args: string[]): { status: number | null; err: string; seconds: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: r.status, err: r.stderr, seconds: (performance.now() - t0) / 1000 };
}

const site = { what: "the site", own: { "index.html": "file", assets: "folder" } } as const;

describe("playground -o", () => {
  it("a place that cannot hold a folder (/proc/x) is refused at once, naming it", () => {
    // Before: Node's mkdirSync({ recursive: true }) looped at 100% CPU until killed.
    for (const dir of ["/proc/x", "/proc/x/y"]) {
      const r = cclab("playground", "-o", dir);
      expect(r.status).toBe(1);
      expect(r.err).toContain(
        "playground: argument '-o': cannot make the folder /proc/x: ENOENT: no such file or directory (/proc exists but cannot hold a folder",
      );
      expect(r.seconds).toBeLessThan(underLoad(20));
    }
  });

  it("a non-empty folder is named with what is in it and refused; --force writes beside it", () => {
    const dir = join(root, "busy");
    mkdirSync(join(dir, "photos"), { recursive: true });
    writeFileSync(join(dir, "thesis.tex"), "");
    const r = cclab("playground", "-o", dir);
    expect(r.status).toBe(1);
    expect(r.err).toContain(
      `playground: argument '-o': ${dir} is not empty: it holds photos/, thesis.tex; give an empty or new folder, or --force`,
    );
    expect(readdirSync(dir).sort()).toEqual(["photos", "thesis.tex"]);
    expect(prepareOutputDir("playground", "-o", dir, { ...site, force: true })).toBe(dir);
  });

  it("a symbolic link is named with where it leads and refused; --force writes where it leads", () => {
    const target = join(root, "target");
    mkdirSync(target);
    const link = join(root, "link");
    symlinkSync(target, link);
    const r = cclab("playground", "-o", link);
    expect(r.status).toBe(1);
    expect(r.err).toContain(
      `playground: argument '-o': ${link} is a symbolic link (to ${target}); give a folder, or --force`,
    );
    expect(prepareOutputDir("playground", "-o", link, { ...site, force: true })).toBe(link);
    symlinkSync(join(root, "nowhere"), join(root, "dangling"));
    expect(() => prepareOutputDir("playground", "-o", join(root, "dangling"), { ...site, force: true })).toThrow(
      "is a symbolic link to",
    );
  });

  it("a file in the folder's place is refused; an earlier site, an empty folder or a new path are taken", () => {
    writeFileSync(join(root, "afile"), "");
    expect(() => prepareOutputDir("playground", "-o", join(root, "afile"), site)).toThrow(
      `playground: argument '-o': ${join(root, "afile")} is a file; give a folder for the site`,
    );
    const earlier = join(root, "earlier");
    mkdirSync(join(earlier, "assets"), { recursive: true });
    writeFileSync(join(earlier, "index.html"), "");
    expect(prepareOutputDir("playground", "-o", earlier, site)).toBe(earlier);
    const fresh = join(root, "a", "b", "c");
    expect(prepareOutputDir("playground", "-o", fresh, site)).toBe(fresh);
    expect(statSync(fresh).isDirectory()).toBe(true);
    expect(prepareOutputDir("playground", "-o", fresh, site)).toBe(fresh);
  });
});

describe("an earlier site's names are taken only as what the site writes there", () => {
  it("links in an earlier site's place are refused, naming where they lead; nothing is written through them", () => {
    const dir = join(root, "site-links");
    mkdirSync(dir);
    const victim = join(root, "victim.txt");
    writeFileSync(victim, "mine");
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    symlinkSync(victim, join(dir, "index.html"));
    symlinkSync(elsewhere, join(dir, "assets"));
    const r = cclab("playground", "-o", dir);
    expect(r.status).toBe(1);
    expect(r.err).toMatch(
      new RegExp(
        `playground: argument '-o': ${dir}/(index.html|assets) is a symbolic link \\(to ${root}/(victim.txt|elsewhere)\\); the site is not written through links`,
      ),
    );
    expect(readFileSync(victim, "utf8")).toBe("mine");
    expect(readdirSync(elsewhere)).toEqual([]);
    // --force writes beside other files, never through a link in the site's own place.
    expect(() => prepareOutputDir("playground", "-o", dir, { ...site, force: true })).toThrow("is a symbolic link");
  });

  it("a file where assets/ goes, or a folder where index.html goes, is named with -o", () => {
    const a = join(root, "s3");
    mkdirSync(a);
    writeFileSync(join(a, "assets"), "");
    expect(() => prepareOutputDir("playground", "-o", a, site)).toThrow(
      `playground: argument '-o': ${a}/assets is a file where the site has a folder: remove it, or give another folder`,
    );
    const b = join(root, "s4");
    mkdirSync(join(b, "index.html"), { recursive: true });
    const r = cclab("playground", "-o", b);
    expect(r.status).toBe(1);
    expect(r.err).toContain(
      `playground: argument '-o': ${b}/index.html is a folder where the site has a file: remove it, or give another folder`,
    );
  });

  it("names from the folder reach the terminal with control characters escaped", () => {
    const dir = join(root, "odd-names");
    mkdirSync(dir);
    writeFileSync(join(dir, "a\x1b]0;pwned\x07"), "");
    expect(() => prepareOutputDir("playground", "-o", dir, site)).toThrow("it holds a\\x1b]0;pwned\\x07;");
  });
});

describe("--nccl-tuner's file", () => {
  it("a file that cannot be opened is left as it was; a FIFO is refused by type, without blocking", () => {
    // A program that runs cannot be opened for writing (ETXTBSY), even by root.
    const busy = join(root, "busy-program");
    copyFileSync(process.execPath, busy);
    const running = spawn(busy, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
    try {
      expect(() => writeOutputFile("model", "--nccl-tuner", busy, "new")).toThrow(
        `model: argument '--nccl-tuner': cannot write ${busy}: ETXTBSY: text file is busy`,
      );
      expect(existsSync(busy)).toBe(true);
      expect(statSync(busy).size).toBe(statSync(process.execPath).size);
    } finally {
      running.kill();
    }
    const fifo = join(root, "tuner.fifo");
    execFileSync("mkfifo", [fifo]);
    const refused = `model: argument '--nccl-tuner': cannot write ${fifo}: it is a FIFO (named pipe), which would block until read`;
    expect(() => checkOutputFile("model", "--nccl-tuner", fifo)).toThrow(refused);
    expect(() => writeOutputFile("model", "--nccl-tuner", fifo, "x")).toThrow(refused);
    const r = cclab("model", "allreduce", "-n", "8", "-b", "1K", "-e", "4K", "--nccl-tuner", fifo);
    expect(r.status).toBe(1);
    expect(r.err).toContain(refused);
  });

  it("'' is refused as an empty path, not taken as absent", () => {
    const r = cclab("model", "allreduce", "-n", "8", "--nccl-tuner", "");
    expect(r.status).toBe(1);
    expect(r.err).toContain("model: argument '--nccl-tuner': is an empty path: give a file name");
  });

  it("a missing folder is named before the sweep; a full disk names the flag and the file", () => {
    const missing = join(root, "no", "such", "tuner.csv");
    expect(() => checkOutputFile("model", "--nccl-tuner", missing)).toThrow(
      `model: argument '--nccl-tuner': cannot write ${missing}: its folder ${join(root, "no", "such")} does not exist`,
    );
    const r = cclab("model", "allreduce", "-n", "8", "-b", "1K", "-e", "4K", "--nccl-tuner", "/dev/full");
    expect(r.status).toBe(1);
    expect(r.err).toContain("model: argument '--nccl-tuner': cannot write /dev/full: ENOSPC: no space left on device");
    expect(existsSync("/dev/full")).toBe(true);
  });

  it("a write that fails part way leaves no incomplete file", () => {
    // A file size limit (RLIMIT_FSIZE, 300 bytes) stops the write part way, as a full disk would.
    const file = join(root, "tuner.csv");
    const r = spawnSync(
      "prlimit",
      [
        "--fsize=300",
        process.execPath,
        "src/cli/bin.js",
        "model",
        "allreduce",
        "-n",
        "8",
        "-b",
        "1K",
        "-e",
        "4K",
        "--nccl-tuner",
        file,
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `model: argument '--nccl-tuner': cannot write ${file}: EFBIG: file too large; the incomplete file was removed`,
    );
    expect(existsSync(file)).toBe(false);
  });
});
