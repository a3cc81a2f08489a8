#!/usr/bin/env node
/**
 * The `cclab` command as the package installs it (bin: dist/src/cli/cclab.js, plain JavaScript;
 * tsx is loaded only for a user's .ts program or algorithm file). From the clone, bin.js runs the
 * same through tsx.
 */
import { main } from "./main.js";

// `cclab list | head`: a reader that stops early is not an error.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});
process.exitCode = await main();
