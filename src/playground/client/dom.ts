/**
 * How the playground puts anything on its page: elements built one by one, text always as text
 * (a string child is a text node), so nothing a program, the Worker or a link says can become
 * markup. The pictures, made as SVG text by the renderers shared with the command line (which
 * escape every string they carry), are parsed as XML, never as HTML, and what a picture has no
 * business holding (script, foreignObject, event handlers, links) is removed before it is shown.
 */

export type Child = Node | string | false | null | undefined;

/** The page's element `#id` (the page is built by html.ts: one missing is a bug, said so). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}
export const input = (id: string) => byId<HTMLInputElement>(id);

/** The integer in the field `#id`, refused (naming the field and the range) outside lo..hi. */
export function num(id: string, lo: number, hi: number): number {
  const v = Math.round(Number(input(id).value));
  if (!Number.isFinite(v) || v < lo || v > hi)
    throw new Error(`${id} must be an integer in ${lo}..${hi}, got '${input(id).value}'`);
  return v;
}

/** An element with attributes (set as values, never parsed) and children (strings as text). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string>> = {},
  ...children: readonly Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) if (c !== false && c !== null && c !== undefined) el.append(c);
  return el;
}

/** Replaces `el`'s children. */
export function fill(el: Element, ...children: readonly Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string => c !== false && c !== null && c !== undefined));
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** Removes what a drawing never needs and a script could use. */
function defuse(root: Element): void {
  for (const bad of root.querySelectorAll("script, foreignObject, iframe, object, embed, a, use[href^='http']"))
    bad.remove();
  for (const el of [root, ...root.querySelectorAll("*")]) {
    for (const a of [...el.attributes]) {
      const v = a.value.trim().toLowerCase();
      if (/^on/i.test(a.name) || ((a.name === "href" || a.name.endsWith(":href")) && !v.startsWith("#")))
        el.removeAttribute(a.name);
    }
  }
}

function parseSvg(markup: string): SVGSVGElement {
  const doc = new DOMParser().parseFromString(markup, "image/svg+xml");
  const root = doc.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== "svg" || doc.querySelector("parsererror")) {
    throw new Error(
      `the picture is not well-formed SVG: ${doc.querySelector("parsererror")?.textContent ?? root.localName}`,
    );
  }
  defuse(root);
  return document.importNode(root, true) as unknown as SVGSVGElement;
}

/** Sets an <svg> element's content from SVG markup for its children (the renderers' body). */
export function svgContent(svg: SVGSVGElement, inner: string): void {
  const parsed = parseSvg(`<svg xmlns="${SVG_NS}">${inner}</svg>`);
  svg.replaceChildren(...parsed.childNodes);
}

/** Replaces `box`'s content by a whole SVG document (a renderer's or Graphviz's output). */
export function svgInto(box: Element, markup: string): void {
  box.replaceChildren(parseSvg(markup.slice(Math.max(0, markup.indexOf("<svg")))));
}
