/**
 * `cclab playground -o site/`: writes the playground, a static site (one page and its assets)
 * that opens from disk or any static host; `--serve` also serves it on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { jsonOption, nranksOption, parsers, printJson } from "./options.js";

interface PlaygroundFlags {
  nranks: number;
  output?: string;
  serve?: boolean;
  port: number;
  json?: boolean;
}

const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;

export function registerPlayground(program: Command): void {
  const p = parsers("playground");
  program
    .command("playground")
    .description(
      "write the playground, a static site to edit, run (sim), verify and explain programs and algorithms in a browser",
    )
    .addOption(
      new Option(
        "-o, --output <dir>",
        "the folder to write the site into (default: site, or a temporary one with --serve)",
      ),
    )
    .addOption(nranksOption("the simulated ranks the page starts with (a link may give others)", p.int("-n", 1, 64), 4))
    .option("--serve", "serve the site on 127.0.0.1 until interrupted")
    .option("--port <n>", "--serve's port (0: any free one)", p.int("--port", 0, 65535), 8377)
    .addOption(jsonOption())
    .action(async (f: PlaygroundFlags) => {
      const { buildSite } = await import("../playground/build.js");
      const temporary = f.output === undefined && f.serve === true;
      const dir = resolve(f.output ?? (temporary ? mkdtempSync(join(tmpdir(), "cclab-playground-")) : "site"));
      const r = await buildSite(dir, f.nranks);
      if (f.json) printJson(r);
      else {
        for (const file of r.files)
          console.log(
            `  ${file.path.padEnd(22)} ${kib(file.bytes).padStart(11)}  gzip ${kib(file.gzipBytes).padStart(10)}`,
          );
        console.log(
          `cclab playground: wrote ${dir} (${kib(r.bytes)}, ${kib(r.gzipBytes)} gzipped); open ${join(dir, "index.html")}`,
        );
      }
      if (!f.serve) return;
      const { serveSite } = await import("../playground/serve.js");
      const { url } = await serveSite(dir, f.port);
      console.error(`serving ${dir} at ${url} (Ctrl-C stops)`);
      if (temporary) {
        // The temporary site goes when the server does.
        for (const sig of ["SIGINT", "SIGTERM"] as const)
          process.once(sig, () => {
            rmSync(dir, { recursive: true, force: true });
            process.exit(130);
          });
      }
      await new Promise<never>(() => {});
    });
}
