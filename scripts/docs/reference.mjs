// One package's API reference: docgen's Markdown pages for its public modules, and the check
// that every public export shows on them.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { stripVTControlCharacters as plain } from "node:util"

const docgenBin = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@effect/docgen/package.json")),
  "bin.cjs",
)

/** The docgen page of a module of `pkg` in `out`. */
export const generatedPage = (pkg, out, file) =>
  path.join(out, "modules", "src", `${path.relative(path.join(pkg.dir, "src"), file)}.md`)

/**
 * Runs docgen over `pkg`'s public modules into `out`; resolves with its errors (none when it
 * succeeded). docgen reads its configuration and the package's `name` and `homepage` from its working
 * directory, and names pages by their path below it: a scratch directory one level inside the
 * package (ignored as `.tmp`) gives pages named `src/<module>.ts.md` without touching package.json.
 */
export const docgen = (pkg, out) => {
  const cwd = path.join(pkg.dir, ".tmp")
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
      console.log(`docgen ${pkg.manifest.name}: ${code === 0 ? "ok" : "failed"} (${seconds} s)`)
      const errors = plain(output)
        .split("\n")
        .filter((line) => /^\s+(Missing|Empty|Unable)\b/.test(line))
      resolve(
        code === 0 ? [] : errors.length > 0 ? errors.map((line) => line.trim()) : [plain(output).trim()],
      )
    })
  })
}

/** The names a docgen page documents: its `##` entries, and the namespaces it re-exports. */
export const documentedNames = (file) => {
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, "utf8")
  const names = new Set()
  for (const match of text.matchAll(
    /^## (?:~~)?(.+?)(?:~~)?(?: \((?:class|interface|type alias|namespace)\))?$/gm,
  )) {
    // A module's own `## <module> overview` heading names no export.
    if (!match[1].endsWith(" overview")) names.add(match[1])
  }
  for (const match of text.matchAll(/^export \* as (\S+) from /gm)) names.add(match[1])
  return names
}

/** Each public export the reference leaves out: on the page of the module it comes through, or of its declaring module. */
export const missingExports = (pkg, pageOf) =>
  pkg.names.flatMap((entry) => {
    const via = pageOf(entry.via)
    if (via === undefined) return [`${path.relative(pkg.dir, entry.via)}: no reference page`]
    if (via.has(entry.name)) return []
    const declared = entry.declaredIn === undefined ? undefined : pageOf(entry.declaredIn)
    if (declared?.has(entry.declaredName ?? entry.name)) return []
    return [`${path.relative(pkg.dir, entry.via)}: ${entry.name} is exported but not in the reference`]
  })
