/**
 * Every relative link of the README, the guides in docs/ and the packages' READMEs resolves: the
 * file or directory exists, and a `#fragment` names a heading of the linked Markdown file (by
 * GitHub's anchors). The README points into docs/ for everything it no longer says itself, so a
 * guide renamed or a heading reworded must not leave a newcomer at a dead link. The rules are
 * shared with the built docs site's check (scripts/docs/links.mjs).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { brokenLinks, markdownAnchors, markdownLinks } from "../../../scripts/docs/links.mjs"

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

const markdown = { linksOf: markdownLinks, anchorsOf: markdownAnchors, kind: ".md" } as const
const linksOf = (file: string) => markdownLinks(readFileSync(file, "utf8"))
const anchors = (file: string) => markdownAnchors(readFileSync(file, "utf8"))

describe("the docs' links", () => {
  it("finds the README's links into docs/ (the check reads what it should)", () => {
    expect(linksOf(path.join(root, "README.md"))).toContain("docs/getting-started.md")
    expect(anchors(path.join(root, "docs", "concepts.md"))).toContain("what-it-guarantees")
  })

  it.each(documents().map((file) => [path.relative(root, file), file]))(
    "%s: every relative link resolves",
    (_, file) => {
      expect(brokenLinks(file, markdown)).toEqual([])
    },
  )
})
