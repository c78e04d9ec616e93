/**
 * Every relative link of the README, the guides in docs/ and the packages' READMEs resolves: the
 * file or directory exists, and a `#fragment` names a heading of the linked Markdown file (by
 * GitHub's anchors). The README points into docs/ for everything it no longer says itself, so a
 * guide renamed or a heading reworded must not leave a newcomer at a dead link. The rules are
 * shared with the built docs site's check (scripts/docs/links.mjs).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
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

/** Every TypeScript source file of the packages (not their tests, not their builds). */
const sources = (): ReadonlyArray<string> => {
  const found: Array<string> = []
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name)
      if (statSync(file).isDirectory()) visit(file)
      else if (name.endsWith(".ts")) found.push(file)
    }
  }
  for (const name of readdirSync(path.join(root, "packages"))) {
    const src = path.join(root, "packages", name, "src")
    if (existsSync(src)) visit(src)
  }
  return found
}

describe("the docs that messages point to", () => {
  // A message that sends someone to a section of the docs must not send them to a dead link.
  const pointers = sources().flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/docs\/([a-z0-9-]+\.md)#([a-z0-9-]+)/g)].map((match) => ({
      where: path.relative(root, file),
      page: match[1] ?? "",
      anchor: match[2] ?? "",
    })),
  )

  it("the in-doubt notices of the library and the CLI point to the troubleshooting page", () => {
    const named = (dir: string) =>
      pointers.filter((p) => p.where.startsWith(dir) && p.page === "troubleshooting.md").map((p) => p.anchor)
    expect(named("packages/core/src")).toContain("a-call-is-in-doubt")
    expect(named("packages/cli/src")).toContain("a-call-is-in-doubt")
  })

  it("every docs/PAGE.md#SECTION in the sources names a heading of that page", () => {
    const broken = pointers.filter((p) => {
      const file = path.join(root, "docs", p.page)
      return !existsSync(file) || !anchors(file).has(p.anchor)
    })
    expect(broken).toEqual([])
  })

  it("the troubleshooting page is linked from the README and from every guide's navigation", () => {
    expect(linksOf(path.join(root, "README.md"))).toContain("docs/troubleshooting.md")
    const guides = readdirSync(path.join(root, "docs")).filter(
      (name) => name.endsWith(".md") && name !== "effect-4.md",
    )
    for (const guide of guides)
      expect(linksOf(path.join(root, "docs", guide)), guide).toContain("troubleshooting.md")
  })
})
