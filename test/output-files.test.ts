/**
 * What the command line writes: playground -o's folder is checked before any mkdir (a place that
 * cannot hold a folder, /proc/x, answers at once instead of spinning in a recursive mkdir), a
 * non-empty folder or a symbolic link is named and refused unless --force; --nccl-tuner refuses an
 * empty path and names itself and the file when the file cannot be written.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkOutputFile, prepareOutputDir } from "../src/cli/output-files.js";

const root = mkdtempSync(join(tmpdir(), "cclab-output-"));

/** The real command in a process of its own (a spinning mkdir cannot stop the test runner). */
function cclab(...args: string[]): { status: number | null; err: string; seconds: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["src/cli/bin.js", ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: r.status, err: r.stderr, seconds: (performance.now() - t0) / 1000 };
}

const site = { what: "the site", own: ["index.html", "assets"] };

describe("playground -o", () => {
  it("a place that cannot hold a folder (/proc/x) is refused at once, naming it", () => {
    // Before: Node's mkdirSync({ recursive: true }) looped at 100% CPU until killed.
    for (const dir of ["/proc/x", "/proc/x/y"]) {
      const r = cclab("playground", "-o", dir);
      expect(r.status).toBe(1);
      expect(r.err).toContain(
        "playground: argument '-o': cannot make the folder /proc/x: ENOENT: no such file or directory (/proc exists but cannot hold a folder",
      );
      expect(r.seconds).toBeLessThan(20);
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

describe("--nccl-tuner's file", () => {
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
