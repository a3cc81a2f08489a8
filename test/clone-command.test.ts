/**
 * `npx cclab` in the clone, right after `npm install` and before any build: package.json's bin is
 * src/cli/bin.js, which runs the TypeScript sources through tsx when they sit beside it (the
 * installed package runs its compiled dist/, test/package.test.ts), so npm finds the command in
 * the project itself instead of looking the name up on the registry.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};

describe("the cclab command in the clone", () => {
  it("bin is an executable file the clone has and the package ships", () => {
    const bin = pkg.bin.cclab as string;
    expect(statSync(resolve(ROOT, bin)).mode & 0o111).not.toBe(0);
    expect(pkg.files).toContain(bin);
  });

  it("npx --no-install cclab --version prints this package's version", () => {
    const r = spawnSync("npx", ["--no-install", "cclab", "--version"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 170_000,
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  }, 180_000);
});
