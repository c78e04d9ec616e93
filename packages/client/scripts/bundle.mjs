#!/usr/bin/env node
import * as fs from "node:fs"
/**
 * Bundles `@mcp-handles/client` into dist/ (tsc writes the declarations beside it): its code,
 * core's, the stores' and Effect's in one ESM bundle, a chunk per store loaded when chosen.
 * Effect, the `@effect/*` packages and `@mcp-handles/*` are bundled, so the package has no
 * Effect peer; every other package stays an import and must be one of its dependencies (the
 * build fails otherwise, as the package would fail to load where it is installed).
 */
import { builtinModules } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
const bundled = /^(effect|@effect\/[^/]+|@mcp-handles\/[^/]+)(\/|$)/
const packageOf = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/")

for (const stale of ["index.js", "chunks"])
  fs.rmSync(path.join(root, "dist", stale), { recursive: true, force: true })
const result = await esbuild.build({
  entryPoints: [path.join(root, "src", "index.ts")],
  outdir: path.join(root, "dist"),
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // The workspace's sources, as the tests see them: the bundle never depends on a stale dist.
  conditions: ["@mcp-handles/source"],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  plugins: [
    {
      name: "dependencies-stay-imports",
      setup: (build) =>
        build.onResolve({ filter: /^[^./]/ }, (args) =>
          bundled.test(args.path) ? undefined : { path: args.path, external: true },
        ),
    },
  ],
})

const builtins = new Set(builtinModules)
const imported = new Set(
  Object.values(result.metafile.outputs).flatMap((output) =>
    output.imports.filter((entry) => entry.external).map((entry) => entry.path),
  ),
)
const undeclared = [...imported].filter(
  (specifier) =>
    !specifier.startsWith("node:") &&
    !builtins.has(specifier) &&
    manifest.dependencies?.[packageOf(specifier)] === undefined,
)
if (undeclared.length > 0) {
  console.error(`bundle: imports that are not dependencies of ${manifest.name}: ${undeclared.join(", ")}`)
  process.exit(1)
}
