#!/usr/bin/env node
// The `cclab` command. cclab ships TypeScript and runs it through tsx, so the same loader also
// takes users' own algorithm files (cclab verify --algorithm-file ./mine.ts) without a build step.
import { register } from "tsx/esm/api";

register();
await import("./main.ts");
