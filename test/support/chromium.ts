/**
 * Headless Chromium for the tests that drive a page (browser, playground, viz-network): where
 * the browser is, and the flags it runs with here (no sandbox as root, no GPU, no background
 * traffic on a closed network, fixed font rendering for screenshots).
 */
import { spawnSync } from "node:child_process";

/** The Chromium on PATH, or undefined (Debian: apt-get install -y chromium). */
export function findChromium(): string | undefined {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    const r = spawnSync("which", [name], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

export const CHROME_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--hide-scrollbars",
  "--font-render-hinting=none",
];
