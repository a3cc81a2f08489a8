/**
 * `cclab playground -o site/`: writes the playground, a static site (one page and its assets)
 * that opens from disk or any static host; `--serve` also serves it on 127.0.0.1. The folder is
 * checked before anything is made (output-files.ts): a new one, an empty one or an earlier site's,
 * else --force.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../core/errors.js";
import { jsonOption, nranksOption, parsers, printJson } from "./options.js";
import { prepareOutputDir } from "./output-files.js";

interface PlaygroundFlags {
  nranks: number;
  output?: string;
  serve?: boolean;
  port: number;
  host?: string[];
  force?: boolean;
  json?: boolean;
}

/** A name --host accepts: a DNS name or an IPv4 address (letters, digits, dots and dashes). */
function checkHostName(name: string): string | undefined {
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(name))
    return `expected a host name like myhost.local (letters, digits, dots and dashes), got ${JSON.stringify(name)}`;
  return undefined;
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
        "the folder to write the site into: new, empty, or an earlier site's (default: site, or a temporary one with --serve)",
      ),
    )
    .addOption(nranksOption("the simulated ranks the page starts with (a link may give others)", p.int("-n", 1, 64), 4))
    .option(
      "--serve",
      "serve the site's own files on 127.0.0.1 until interrupted, to requests for Host localhost, 127.0.0.1 or [::1] (and --host)",
    )
    .option("--port <n>", "--serve's port (0: any free one)", p.int("--port", 0, 65535), 8377)
    .option(
      "--host <name>",
      "--serve: a name the browser may reach it by besides localhost, 127.0.0.1 and [::1] (it still listens on 127.0.0.1 only); repeatable",
      (v: string, prior: string[] | undefined) => {
        const why = checkHostName(v);
        if (why) throw new InvalidArgumentError({ op: "playground", arg: "--host" }, why);
        return [...(prior ?? []), v];
      },
    )
    .option(
      "--force",
      "write into a folder that holds other files, or through a symbolic link (default: refused, naming what is there)",
    )
    .addOption(jsonOption())
    .action(async (f: PlaygroundFlags) => {
      const { buildSite, SITE_FILES } = await import("../playground/build.js");
      const temporary = f.output === undefined && f.serve === true;
      if (f.host && !f.serve) throw new InvalidArgumentError({ op: "playground", arg: "--host" }, "goes with --serve");
      const dir = temporary
        ? mkdtempSync(join(tmpdir(), "cclab-playground-"))
        : prepareOutputDir("playground", "-o", f.output ?? "site", {
            what: "the site",
            // An earlier build's files are rewritten; anything else there needs --force.
            own: Object.fromEntries(SITE_FILES.map((s) => [s.split("/")[0]!, s.includes("/") ? "folder" : "file"])),
            ...(f.force ? { force: true } : {}),
          });
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
      const { url } = await serveSite(dir, f.port, { files: r.files.map((x) => x.path), hosts: f.host ?? [] });
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
