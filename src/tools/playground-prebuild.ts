/**
 * The playground's assets built from this checkout into a folder an installed package ships
 * (`npm run build` runs it into dist/playground-site), so `npx cclab playground` works where
 * cclab's TypeScript sources are not installed (src/playground/build.ts, prebuiltAssets).
 *   node --import tsx src/tools/playground-prebuild.ts dist/playground-site
 */
import { buildSite } from "../playground/build.js";

const out = process.argv[2];
if (!out) {
  console.error("usage: playground-prebuild.ts OUTPUT_FOLDER");
  process.exit(2);
}
const r = await buildSite(out);
console.error(`playground-prebuild: ${r.files.length} files into ${out} (${Math.round(r.bytes / 1024)} KiB)`);
