#!/usr/bin/env node
// The `cclab` command from the clone (npm start, node src/cli/bin.js): cclab's TypeScript sources
// run through tsx. The npm package's command is the compiled cclab.ts (dist/src/cli/cclab.js).
import { register } from "tsx/esm/api";

register();
await import("./cclab.ts");
