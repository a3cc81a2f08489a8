/**
 * Your edits, kept in this browser (localStorage), one draft per file path: choosing another
 * example, or reopening the page, loses nothing, and choosing the file again shows your copy.
 * A draft equal to the site's own text is dropped. Where the browser keeps nothing (storage
 * off, full), keepDraft says so and the page asks before it discards the edits.
 */
const DRAFTS = "cclab-playground:drafts";
const LAST = "cclab-playground:last";

function read(): Record<string, string> {
  try {
    const o: unknown = JSON.parse(localStorage.getItem(DRAFTS) ?? "{}");
    if (typeof o !== "object" || o === null || Array.isArray(o)) return {};
    return Object.fromEntries(Object.entries(o).filter(([, v]) => typeof v === "string")) as Record<string, string>;
  } catch {
    return {};
  }
}

export function draftOf(path: string): string | undefined {
  return read()[path];
}

/** Keeps `text` as `path`'s draft (drops it when it is `original`); false where nothing could be kept. */
export function keepDraft(path: string, text: string, original: string | undefined): boolean {
  try {
    const all = read();
    if (text === original) delete all[path];
    else all[path] = text;
    localStorage.setItem(DRAFTS, JSON.stringify(all));
    return true;
  } catch {
    return false;
  }
}

export function dropDraft(path: string): void {
  keepDraft(path, "", "");
}

/** The example last opened here (the page reopens it). */
export function lastOpened(): string | undefined {
  try {
    return localStorage.getItem(LAST) ?? undefined;
  } catch {
    return undefined;
  }
}

export function setLastOpened(path: string): void {
  try {
    localStorage.setItem(LAST, path);
  } catch {
    // Nothing kept: the page opens the first example next time.
  }
}
