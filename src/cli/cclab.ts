#!/usr/bin/env node
/**
 * The `cclab` command. The package's bin is src/cli/bin.js: in the installed package it runs
 * this file compiled (dist/src/cli/cclab.js, plain JavaScript; tsx is loaded only for a user's .ts
 * program or algorithm file); in the clone it runs this file through tsx.
 */
import { main } from "./main.js";

// `cclab list | head`: a reader that stops early is not an error.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});
process.exitCode = await main();
