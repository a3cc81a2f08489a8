/** Writes native/run_layout.h from src/native/run-layout.ts: `npx tsx src/tools/run-layout.ts`. */
import { writeFileSync } from "node:fs";
import { runLayoutHeader } from "../native/run-layout.js";

const file = new URL("../../native/run_layout.h", import.meta.url);
writeFileSync(file, runLayoutHeader());
console.log(`wrote ${file.pathname}`);
