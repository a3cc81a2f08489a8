/** How the playground resolves an import in the workspace (shared by the page and the Worker). */

/** 'examples/x.ts' + '../src/index.js' -> 'src/index' (no extension), or undefined for a bare name. */
export function resolvePath(from: string, spec: string): string | undefined {
  if (spec === "cclab") return "src/index";
  if (spec === "cclab/dsl") return "src/schedule/dsl";
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const parts = from.split("/").slice(0, -1);
  for (const p of spec.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(p);
  }
  return parts.join("/").replace(/\.(js|ts|mjs|mts)$/, "");
}

/** The relative imports of a file's text ('../lib/ring.js'), in order, once each. */
export function importsOf(text: string): string[] {
  const found = [...text.matchAll(/\bfrom\s+["']([^"']+)["']/g)].map((m) => m[1] as string);
  return [...new Set(found)];
}
