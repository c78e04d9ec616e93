/**
 * The API reference check of `pnpm run docs` (scripts/docs), on a small package written for each
 * test: docgen refuses an export without `@since`, and an export that docgen leaves off its pages
 * is reported as missing from the reference. `pnpm run docs` runs the same functions over every
 * published package.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { publicSurface } from "../../../scripts/docs/exports.mjs"
import { docgen, documentedNames, generatedPage, missingExports } from "../../../scripts/docs/reference.mjs"

const repository = fileURLToPath(new URL("../../../", import.meta.url))
const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

const tagged = (text: string, category: string) =>
  `/**\n * ${text}\n *\n * @since 0.1.0\n * @category ${category}\n */\n`

const index = `/**\n * A fixture.\n *\n * @since 0.1.0\n */\n\n${tagged("Colours.", "modules")}export * as Color from "./Color.js"\n`
const color = (extra = "") =>
  `/**\n * Colours.\n *\n * @since 0.1.0\n */\n\n${tagged("The red one.", "constants")}export const red = "red"\n\n${tagged("A colour's name.", "models")}export type Name = "red" | "blue"\n${extra}`

/** Writes a one-package repository whose `Color` module is `colorSource`, and checks its reference. */
const check = async (colorSource: string) => {
  const root = mkdtempSync(path.join(os.tmpdir(), "docs-reference-"))
  roots.push(root)
  const dir = path.join(root, "packages", "fixture")
  mkdirSync(path.join(dir, "src"), { recursive: true })
  copyFileSync(path.join(repository, "tsconfig.base.json"), path.join(root, "tsconfig.base.json"))
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "fixture", version: "0.1.0", exports: { ".": { types: "./dist/index.d.ts" } } }),
  )
  writeFileSync(
    path.join(dir, "tsconfig.src.json"),
    JSON.stringify({
      extends: "../../tsconfig.base.json",
      compilerOptions: { rootDir: "src", lib: ["ES2022"] },
      include: ["src"],
    }),
  )
  writeFileSync(path.join(dir, "src", "index.ts"), index)
  writeFileSync(path.join(dir, "src", "Color.ts"), colorSource)
  const [pkg] = publicSurface(root)
  if (pkg === undefined) throw new Error("the fixture package was not found")
  const out = path.join(root, "reference")
  const errors = await docgen(pkg, out)
  const missing =
    errors.length > 0 ? [] : missingExports(pkg, (file) => documentedNames(generatedPage(pkg, out, file)))
  return {
    errors,
    missing,
    page: documentedNames(generatedPage(pkg, out, path.join(dir, "src", "Color.ts"))),
  }
}

describe("the API reference check", () => {
  it("passes a package whose every export is tagged and documented", async () => {
    const { errors, missing, page } = await check(color())
    expect(errors).toEqual([])
    expect(missing).toEqual([])
    expect([...(page ?? [])].sort()).toEqual(["Name", "red"])
  }, 180_000)

  it("fails on an export without @since", async () => {
    const { errors } = await check(
      color().replace("The red one.\n *\n * @since 0.1.0\n", "The red one.\n *\n"),
    )
    expect(errors.join("\n")).toMatch(/Missing @since tag in .*Color\.ts#red/)
  }, 180_000)

  it("fails on a public export docgen leaves off the reference", async () => {
    const { errors, missing } = await check(
      color(`\n${tagged("Shades.", "models")}export enum Shade {\n  Light,\n  Dark,\n}\n`),
    )
    expect(errors).toEqual([])
    expect(missing).toEqual(["src/Color.ts: Shade is exported but not in the reference"])
  }, 180_000)
})
