/**
 * Every relative link of the README, the guides in docs/ and the packages' READMEs resolves: the
 * file or directory exists, and a `#fragment` names a heading of the linked Markdown file (by
 * GitHub's anchors). The README points into docs/ for everything it no longer says itself, so a
 * guide renamed or a heading reworded must not leave a newcomer at a dead link.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))

const documents = (): ReadonlyArray<string> => [
  path.join(root, "README.md"),
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join(root, "docs", name)),
  ...readdirSync(path.join(root, "packages"))
    .sort()
    .map((name) => path.join(root, "packages", name, "README.md"))
    .filter((file) => existsSync(file)),
]

/** The lines outside fenced code blocks: a link inside an example is code, not a link. */
const prose = (text: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let fenced = false
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced
    else if (!fenced) lines.push(line)
  }
  return lines
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
const anchors = (file: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const line of prose(readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const base = (heading[1] ?? "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    found.add(count === 0 ? base : `${base}-${count}`)
  }
  return found
}

/** The relative targets of `[text](target)` and `![alt](target)` links, without a title. */
const linksOf = (file: string): ReadonlyArray<string> =>
  prose(readFileSync(file, "utf8"))
    .map((line) => line.replace(/`[^`]*`/g, (code) => (code.includes("](") ? "" : code)))
    .flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] ?? ""))
    .filter((target) => target !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(target))

const problemsOf = (file: string): ReadonlyArray<string> =>
  linksOf(file).flatMap((target) => {
    const [where, fragment] = target.split("#", 2) as [string, string | undefined]
    const resolved = where === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(where))
    if (!existsSync(resolved)) return [`${target}: no such file`]
    if (fragment === undefined) return []
    if (!resolved.endsWith(".md")) return [`${target}: a fragment on a file that is not Markdown`]
    return anchors(resolved).has(fragment) ? [] : [`${target}: no heading with that anchor`]
  })

describe("the docs' links", () => {
  it("finds the README's links into docs/ (the check reads what it should)", () => {
    expect(linksOf(path.join(root, "README.md"))).toContain("docs/getting-started.md")
    expect(anchors(path.join(root, "docs", "concepts.md"))).toContain("what-it-guarantees")
  })

  it.each(documents().map((file) => [path.relative(root, file), file]))(
    "%s: every relative link resolves",
    (_, file) => {
      expect(problemsOf(file)).toEqual([])
    },
  )
})
