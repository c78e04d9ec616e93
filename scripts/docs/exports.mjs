// The public surface of each published package, read with the TypeScript compiler from its
// package.json `exports`: which source modules an app can reach (the reference documents exactly
// those), and each exported name with the module whose reference page must show it.
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"

/** The packages under `packages/` that are published (package.json not `private`). */
export const publicPackages = (root) =>
  readdirSync(path.join(root, "packages"))
    .sort()
    .map((dir) => ({ dir: path.join(root, "packages", dir), short: dir }))
    .map((pkg) => ({
      ...pkg,
      manifest: JSON.parse(readFileSync(path.join(pkg.dir, "package.json"), "utf8")),
    }))
    .filter((pkg) => pkg.manifest.private !== true)

const sourceFiles = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.join(entry.parentPath, entry.name))

/** The source file a condition object or string stands for: the source condition, else the declarations. */
const sourceTarget = (target) => {
  if (typeof target === "string")
    return target.replace(/^\.\/dist\//, "./src/").replace(/\.(d\.ts|js)$/, ".ts")
  if (target === null || typeof target !== "object") return undefined
  const chosen = target["@mcp-handles/source"] ?? target.types ?? target.default
  return chosen === undefined ? undefined : sourceTarget(chosen)
}

const patternOf = (glob) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace("*", "(.+)")}$`)

/** The source files of a package's entry points, `./*` patterns expanded and `null` subpaths left out. */
export const entryPoints = (pkg) => {
  const exportsField =
    typeof pkg.manifest.exports === "string" ? { ".": pkg.manifest.exports } : pkg.manifest.exports
  const files = sourceFiles(path.join(pkg.dir, "src")).map((file) => `./${path.relative(pkg.dir, file)}`)
  const blocked = Object.entries(exportsField)
    .filter(([, target]) => target === null)
    .map(([subpath]) => patternOf(subpath))
  const entries = new Set()
  for (const [subpath, target] of Object.entries(exportsField)) {
    const source = sourceTarget(target)
    if (source === undefined) continue
    if (!subpath.includes("*")) {
      entries.add(path.join(pkg.dir, source))
      continue
    }
    const pattern = patternOf(source)
    for (const file of files) {
      const match = pattern.exec(file)
      if (match === null) continue
      const reached = subpath.replace("*", match[1] ?? "")
      if (!blocked.some((block) => block.test(reached))) entries.add(path.join(pkg.dir, file))
    }
  }
  return [...entries].sort()
}

const compilerOptions = (root) => {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, "tsconfig.base.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      },
    },
  )
  return { ...parsed.options, noEmit: true, composite: false, incremental: false }
}

/**
 * For each public package: `modules`, the source files the reference documents (entry points and
 * every module reached through them), and `names`, each exported name with the module it is
 * exported from (`via`) and the module declaring it (`declaredIn`, when that one is public too).
 */
export const publicSurface = (root) => {
  const packages = publicPackages(root).map((pkg) => ({ ...pkg, entries: entryPoints(pkg) }))
  const options = compilerOptions(root)
  // Only the packages' own modules matter to who exports what, so a dependency's declarations
  // are read as empty modules: parsing Effect's would cost most of the run.
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName.includes(`${path.sep}node_modules${path.sep}`)
      ? ts.createSourceFile(fileName, "export {}", languageVersion)
      : getSourceFile.call(host, fileName, languageVersion, ...rest)
  const program = ts.createProgram(
    packages.flatMap((pkg) => pkg.entries),
    { ...options, noLib: true },
    host,
  )
  const checker = program.getTypeChecker()
  return packages.map((pkg) => {
    const src = path.join(pkg.dir, "src") + path.sep
    const inPackage = (file) =>
      file.startsWith(src) && !file.slice(src.length).startsWith(`internal${path.sep}`)
    const modules = new Set()
    const names = []
    const visit = (file) => {
      if (modules.has(file)) return
      modules.add(file)
      const sourceFile = program.getSourceFile(file)
      const symbol = sourceFile === undefined ? undefined : checker.getSymbolAtLocation(sourceFile)
      if (symbol === undefined)
        throw new Error(`${path.relative(root, file)}: not a module the compiler read`)
      for (const exported of checker.getExportsOfModule(symbol)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
        const declarations = (target.declarations ?? []).map((declaration) => declaration.getSourceFile())
        const namespace = declarations.find(
          (declaration) => ts.isSourceFile(declaration) && declaration.symbol === target,
        )
        if (namespace !== undefined) {
          names.push({ name: exported.name, via: file, namespace: true })
          if (inPackage(path.resolve(namespace.fileName))) visit(path.resolve(namespace.fileName))
          continue
        }
        const declaredIn = declarations
          .map((declaration) => path.resolve(declaration.fileName))
          .find(inPackage)
        if (declaredIn !== undefined && declaredIn !== file) visit(declaredIn)
        names.push({ name: exported.name, declaredName: target.name, via: file, declaredIn })
      }
    }
    for (const entry of pkg.entries) visit(entry)
    return { ...pkg, modules: [...modules].sort(), names }
  })
}
