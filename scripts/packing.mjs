/**
 * The published packages as a user gets them: each packed with `pnpm pack` (workspace ranges
 * turned into versions, only the `files` that ship), and the @mcp-handles packages one of them
 * needs. Shared by scripts/external-app.mjs (CI) and scripts/install-from-repo.mjs (users, until
 * the first release on npm).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * Packs every published package into `destination` with `runPnpm(args, { cwd })`; returns
 * package name → { tarball, manifest }.
 */
export const pack = async (destination, runPnpm) => {
  const tarballs = new Map()
  for (const dir of fs.readdirSync(path.join(root, "packages")).sort()) {
    const manifestFile = path.join(root, "packages", dir, "package.json")
    if (!fs.existsSync(manifestFile)) continue
    const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"))
    if (manifest.private === true) continue
    const before = new Set(fs.readdirSync(destination))
    await runPnpm(["pack", "--pack-destination", destination], { cwd: path.join(root, "packages", dir) })
    const added = fs.readdirSync(destination).filter((file) => !before.has(file))
    if (added.length !== 1) throw new Error(`pnpm pack in packages/${dir} made ${added.length} files`)
    tarballs.set(manifest.name, { tarball: path.join(destination, added[0]), manifest })
  }
  return tarballs
}

/** The @mcp-handles packages `name` needs (dependencies and peers), itself included. */
export const closure = (name, tarballs, found = new Set()) => {
  const packed = tarballs.get(name)
  if (packed === undefined) throw new Error(`no published package ${name}`)
  if (found.has(name)) return found
  found.add(name)
  const { dependencies = {}, peerDependencies = {} } = packed.manifest
  for (const needed of Object.keys({ ...dependencies, ...peerDependencies })) {
    if (needed.startsWith("@mcp-handles/")) closure(needed, tarballs, found)
  }
  return found
}
