/**
 * The README's quick start and each guide's first TypeScript example run as their text says, in
 * an app made as the README makes it: the README's first shell lines make the folder an npm
 * package (`npm init -y`, CommonJS), and each of these examples is marked with the file its text
 * tells a reader to save it as and the command that runs it, both of which the text says (the
 * marker reader refuses one that does not). scripts/external-app.mjs then runs them exactly so;
 * this test keeps the marks from being dropped without running anything.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { collectExamples, examplesOf } from "../../../scripts/examples.mjs"

const root = fileURLToPath(new URL("../../../", import.meta.url))

describe("the examples a newcomer runs first", () => {
  it("the README makes the app folder with npm init -y before it installs anything", () => {
    const shell = examplesOf(path.join(root, "README.md")).filter((e) => e.language === "sh")
    expect(shell[0]?.source.trim().split("\n")[0]?.trim()).toBe("npm init -y")
  })

  it.each(["README.md", "docs/promise.md", "docs/effect.md"])(
    "%s: the first TypeScript example is saved as index.mts and run by npx tsx index.mts, as its text says",
    (file) => {
      const first = examplesOf(path.join(root, file)).find((e) => e.language === "ts")
      // `.mts`: an ES module (top-level await) in the CommonJS package `npm init -y` makes; tsx:
      // `await using` on every Node.js from 20.
      expect({ file: first?.file, runBy: first?.runBy }).toEqual({
        file: "index.mts",
        runBy: "npx tsx index.mts",
      })
    },
  )

  it("every example that says how to run it says so consistently (the marker reader accepts them all)", () => {
    const told = collectExamples().filter((e) => e.runBy !== undefined)
    expect(told.map((e) => e.name)).toEqual(
      expect.arrayContaining(["quick-start", "promise-sqlite", "effect-sqlite"]),
    )
    for (const example of told) expect(example.file?.endsWith(".mts"), example.where).toBe(true)
  })
})
