// `pnpm docs`: the API reference of every published package by @effect/docgen, and the guides,
// READMEs and reference as one static site in .tmp/site. It fails when docgen finds an export
// without its JSDoc or `@since`, when a public export (from package.json `exports`, read by the
// TypeScript compiler) is missing from the reference, or when a link in the site is broken.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { stripVTControlCharacters as plain } from "node:util"
import { publicSurface } from "./exports.mjs"
import { brokenLinks, htmlAnchors, htmlLinks } from "./links.mjs"
import { buildSite } from "./site.mjs"

const root = fileURLToPath(new URL("../../", import.meta.url))
const site = path.join(root, ".tmp", "site")
const docgenOut = (pkg) => path.join(root, ".tmp", "docgen", pkg.short)
const docgenBin = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@effect/docgen/package.json")),
  "bin.cjs",
)

/**
 * docgen reads its configuration and the package's `name` and `homepage` from its working
 * directory, and names pages by their path below it: a scratch directory one level inside the
 * package (ignored as `.tmp`) gives pages named `src/<module>.ts.md` without touching package.json.
 */
const docgen = (pkg) => {
  const cwd = path.join(pkg.dir, ".tmp")
  const out = docgenOut(pkg)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(cwd, { recursive: true })
  const fromCwd = (file) => path.relative(cwd, file)
  const skipped = readdirSync(path.join(pkg.dir, "src"), { recursive: true })
    .map((name) => path.join(pkg.dir, "src", name))
    .filter((file) => file.endsWith(".ts") && !pkg.modules.includes(file))
  writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: pkg.manifest.name, homepage: "" }))
  writeFileSync(
    path.join(cwd, "docgen.json"),
    JSON.stringify({
      srcDir: fromCwd(path.join(pkg.dir, "src")),
      outDir: fromCwd(out),
      // Modules no entry point reaches are not API: docgen would ask for their tags too.
      exclude: skipped.map(fromCwd),
      parseCompilerOptions: fromCwd(path.join(pkg.dir, "tsconfig.src.json")),
    }),
  )
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [docgenBin, "--no-run-examples"], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      const errors = plain(output)
        .split("\n")
        .filter((line) => /^\s+(Missing|Empty|Unable)\b/.test(line))
      resolve(
        code === 0 ? [] : errors.length > 0 ? errors.map((line) => line.trim()) : [plain(output).trim()],
      )
      console.log(`docgen ${pkg.manifest.name}: ${code === 0 ? "ok" : "failed"} (${seconds} s)`)
    })
  })
}

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

/** The names a docgen page documents: its `##` entries, and the namespaces it re-exports. */
const documentedNames = (file) => {
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, "utf8")
  const names = new Set()
  for (const match of text.matchAll(
    /^## (?:~~)?(.+?)(?:~~)?(?: \((?:class|interface|type alias|namespace)\))?$/gm,
  )) {
    names.add(match[1])
  }
  for (const match of text.matchAll(/^export \* as (\S+) from /gm)) names.add(match[1])
  return names
}

/** Each public export the reference leaves out: on the page of the module it comes through, or of its declaring module. */
export const missingExports = (pkg, pageOf) =>
  pkg.names.flatMap((entry) => {
    const via = pageOf(entry.via)
    if (via === undefined) return [`${path.relative(root, entry.via)}: no reference page`]
    if (via.has(entry.name)) return []
    const declared = entry.declaredIn === undefined ? undefined : pageOf(entry.declaredIn)
    if (declared?.has(entry.declaredName ?? entry.name)) return []
    return [`${path.relative(root, entry.via)}: ${entry.name} is exported but not in the reference`]
  })

const siteFiles = (dir) =>
  readdirSync(dir, { recursive: true })
    .map((name) => path.join(dir, name))
    .filter((file) => file.endsWith(".html"))
    .sort()

const main = async () => {
  const started = Date.now()
  // `pnpm docs core client` documents those packages only: quicker while fixing their tags.
  const only = process.argv.slice(2)
  const packages = publicSurface(root).filter((pkg) => only.length === 0 || only.includes(pkg.short))
  const failures = []
  const docgenErrors = await pooled(packages, docgen)
  packages.forEach((pkg, index) => {
    for (const error of docgenErrors[index]) failures.push(`${pkg.manifest.name}: ${error}`)
  })
  for (const pkg of packages) {
    const pageOf = (file) =>
      documentedNames(
        path.join(docgenOut(pkg), "modules", "src", `${path.relative(path.join(pkg.dir, "src"), file)}.md`),
      )
    if (docgenErrors[packages.indexOf(pkg)].length > 0) continue
    for (const problem of missingExports(pkg, pageOf)) failures.push(`${pkg.manifest.name}: ${problem}`)
  }
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
      `docs: ${pages.length} pages in ${path.relative(root, site)}, ${names} public exports of ${packages.length} packages checked (${((Date.now() - started) / 1000).toFixed(1)} s)`,
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
