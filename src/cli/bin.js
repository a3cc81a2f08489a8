#!/usr/bin/env node
// The `cclab` command (package.json's bin). In a clone, where cclab.ts sits beside this file, it
// runs the TypeScript sources through tsx, so `npx cclab` works right after `npm install` with
// nothing built (and never runs a stale build); in the installed package, which ships no sources,
// it runs the compiled dist/src/cli/cclab.js.
import { existsSync } from "node:fs";

const source = new URL("./cclab.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../../dist/src/cli/cclab.js", import.meta.url).href);
}
