// `pnpm run docs`: the API reference of every published package by @effect/docgen, and the guides,
// READMEs and reference as one static site in .tmp/site. It fails when docgen finds an export
// without its JSDoc or `@since`, when a public export (from package.json `exports`, read by the
// TypeScript compiler) is missing from the reference, or when a link in the site is broken.
import { readdirSync, rmSync } from "node:fs"
import { availableParallelism } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { publicSurface } from "./exports.mjs"
import { brokenLinks, htmlAnchors, htmlLinks } from "./links.mjs"
import { docgen, documentedNames, generatedPage, missingExports } from "./reference.mjs"
import { buildSite } from "./site.mjs"

const root = fileURLToPath(new URL("../../", import.meta.url))
const site = path.join(root, ".tmp", "site")
const docgenOut = (pkg) => path.join(root, ".tmp", "docgen", pkg.short)

/** Runs `task` over `items`, as many at once as the machine has CPUs. */
const pooled = async (items, task) => {
  const results = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), items.length) }, worker))
  return results
}

const siteFiles = (dir) =>
  readdirSync(dir, { recursive: true })
    .map((name) => path.join(dir, name))
    .filter((file) => file.endsWith(".html"))
    .sort()

const main = async () => {
  const started = Date.now()
  // `pnpm run docs core client` documents those packages only: quicker while fixing their tags.
  const only = process.argv.slice(2)
  const packages = publicSurface(root).filter((pkg) => only.length === 0 || only.includes(pkg.short))
  const failures = []
  const docgenErrors = await pooled(packages, (pkg) => docgen(pkg, docgenOut(pkg)))
  packages.forEach((pkg, index) => {
    for (const error of docgenErrors[index]) failures.push(`${pkg.manifest.name}: ${error}`)
  })
  packages.forEach((pkg, index) => {
    if (docgenErrors[index].length > 0) return
    const pageOf = (file) => documentedNames(generatedPage(pkg, docgenOut(pkg), file))
    for (const problem of missingExports(pkg, pageOf)) failures.push(`${pkg.manifest.name}: ${problem}`)
  })
  if (failures.length === 0) {
    rmSync(site, { recursive: true, force: true })
    buildSite({ root, site, packages, docgenOut })
    const pages = siteFiles(site)
    for (const file of pages) {
      for (const problem of brokenLinks(file, {
        linksOf: htmlLinks,
        anchorsOf: htmlAnchors,
        kind: ".html",
      })) {
        failures.push(`${path.relative(site, file)}: ${problem}`)
      }
    }
    const names = packages.reduce((sum, pkg) => sum + pkg.names.length, 0)
    console.log(
      `docs: ${pages.length} pages in ${path.relative(root, site)}, ${names} public exports of ${packages.length} package${packages.length === 1 ? "" : "s"} checked (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    )
  }
  if (failures.length > 0) {
    console.error(
      `docs: ${failures.length} problem(s)\n${failures.map((failure) => `  ${failure}`).join("\n")}`,
    )
    process.exitCode = 1
  }
}

await main()
