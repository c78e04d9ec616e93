// The relative-link rules shared by the repository's Markdown (packages/core/test/DocsLinks.test.ts)
// and the built docs site (scripts/docs/build.mjs): a target must exist, and a `#fragment` must
// name an anchor of the file it points into. Only how links and anchors are read differs.
import { existsSync, readFileSync } from "node:fs"
import * as path from "node:path"

/** The lines outside fenced code blocks: a link inside an example is code, not a link. */
export const prose = (text) => {
  const lines = []
  let fenced = false
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced
    else if (!fenced) lines.push(line)
  }
  return lines
}

/**
 * GitHub's anchors for headings in order: lower case, punctuation dropped, spaces as hyphens,
 * repeats numbered. One slugger per document, so the site's ids match what links on GitHub expect.
 */
export const slugger = () => {
  const seen = new Map()
  return (heading) => {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    return count === 0 ? base : `${base}-${count}`
  }
}

/** The anchors of a Markdown text's headings. */
export const markdownAnchors = (text) => {
  const slug = slugger()
  const found = new Set()
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading !== null) found.add(slug(heading[1] ?? ""))
  }
  return found
}

const external = (target) => target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)

/** The relative targets of `[text](target)` and `![alt](target)` links, without a title. */
export const markdownLinks = (text) =>
  prose(text)
    .map((line) => line.replace(/`[^`]*`/g, (code) => (code.includes("](") ? "" : code)))
    .flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] ?? ""))
    .filter((target) => !external(target))

const unescapeHtml = (value) =>
  value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** The relative `href`/`src` targets of an HTML text (the site's own output: quoted attributes). */
export const htmlLinks = (text) =>
  [...text.matchAll(/\s(?:href|src)="([^"]*)"/g)]
    .map((match) => unescapeHtml(match[1] ?? ""))
    .filter((target) => !external(target))

/** The `id`s of an HTML text's elements. */
export const htmlAnchors = (text) =>
  new Set([...text.matchAll(/\sid="([^"]*)"/g)].map((match) => unescapeHtml(match[1] ?? "")))

/** Each broken relative link of `file`, with why; `anchorsOf` is asked only about files of `kind`. */
export const brokenLinks = (file, { linksOf, anchorsOf, kind }) =>
  linksOf(readFileSync(file, "utf8")).flatMap((target) => {
    const [where, fragment] = target.split("#", 2)
    const resolved = where === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(where))
    if (!existsSync(resolved)) return [`${target}: no such file`]
    if (fragment === undefined) return []
    if (!resolved.endsWith(kind)) return [`${target}: a fragment on a file that is not ${kind}`]
    return anchorsOf(readFileSync(resolved, "utf8")).has(decodeURIComponent(fragment))
      ? []
      : [`${target}: no heading with that anchor`]
  })
