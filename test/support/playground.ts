/**
 * The playground site built once per test file into a temporary directory, and one headless
 * Chromium to open it (test/playground*.test.ts). Registers the file's beforeAll/afterAll; the
 * site and browser are there only when Chromium is (the files skip their tests otherwise).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, expect } from "vitest";
import { buildSite, type SiteReport } from "../../src/playground/build.js";
import { CHROME_ARGS } from "./chromium.js";

export interface BuiltPlayground {
  /** The directory the site is built into. */
  readonly dir: string;
  /** The site's index.html as a file:// address. */
  url(): string;
  /** The browser (throws when the file runs without Chromium: its tests are skipped then). */
  browser(): Browser;
  /** What buildSite reported. */
  site(): SiteReport;
  /** A new tab at `address` (1280x800), once the page says it is ready; its script errors are kept. */
  open(address: string): Promise<Page>;
  /** Closes the tab, expecting no script error in it. */
  close(page: Page): Promise<void>;
}

export function builtPlayground(prefix: string, chromium: string | undefined, timeoutMs = 180_000): BuiltPlayground {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let browser: Browser | undefined;
  let site: SiteReport | undefined;
  beforeAll(async () => {
    if (!chromium) return;
    site = await buildSite(dir);
    const puppeteer = (await import("puppeteer-core")).default;
    browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: CHROME_ARGS });
  }, timeoutMs);
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the playground's ${what} is not there: no Chromium, or beforeAll failed`);
    return v;
  };
  const pageErrors = new Map<Page, string[]>();
  return {
    dir,
    url: () => `file://${join(dir, "index.html")}`,
    browser: () => need(browser, "browser"),
    site: () => need(site, "site"),
    async open(address) {
      const page = await need(browser, "browser").newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      pageErrors.set(page, errors);
      await page.goto(address);
      await page.waitForFunction(() => (globalThis as { playground?: { ready: boolean } }).playground?.ready, {
        timeout: 30_000,
      });
      return page;
    },
    async close(page) {
      await page.close();
      expect(pageErrors.get(page)).toEqual([]);
    },
  };
}
