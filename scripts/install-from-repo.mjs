#!/usr/bin/env node
/**
 * Installs mcp-handles from this repository into the app in the current directory, until the
 * first release is on npm: the packages are built and packed here, and npm installs the tarballs
 * of the ones named (with the @mcp-handles packages they need) plus any other argument as given.
 *
 *   cd my-app && node ../mcp-handles/scripts/install-from-repo.mjs @mcp-handles/core @mcp-handles/store-sqlite effect@3
 *
 * The tarballs stay in <repo>/.packed, so a later `npm install` in the app finds them again.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { closure, pack, root } from "./packing.mjs"

const args = process.argv.slice(2)
if (args.length === 0 || args.includes("--help")) {
  console.log(
    "usage: node <repo>/scripts/install-from-repo.mjs @mcp-handles/core @mcp-handles/store-sqlite effect@3 [more npm install arguments]",
  )
  process.exit(args.length === 0 ? 2 : 0)
}

const step = (what, command, commandArgs, cwd) => {
  console.log(`install-from-repo: ${what}`)
  const ran = spawnSync(command, commandArgs, { cwd, stdio: "inherit" })
  if (ran.status !== 0) {
    console.error(`install-from-repo: ${what} failed (exit ${ran.status ?? ran.signal})`)
    process.exit(1)
  }
}
const runPnpm = async (pnpmArgs, { cwd }) =>
  step(`pnpm ${pnpmArgs.join(" ")}`, "npx", ["-y", "pnpm@12.4.2", ...pnpmArgs], cwd)

if (!fs.existsSync(path.join(root, "node_modules")))
  await runPnpm(["install", "--frozen-lockfile"], { cwd: root })
await runPnpm(["build"], { cwd: root })
const destination = path.join(root, ".packed")
fs.rmSync(destination, { recursive: true, force: true })
fs.mkdirSync(destination)
const tarballs = await pack(destination, runPnpm)

const named = new Set()
const others = args.filter((arg) => {
  const name = arg.replace(/^(@mcp-handles\/[^@]+)@.*$/, "$1")
  if (!name.startsWith("@mcp-handles/")) return true
  for (const needed of closure(name, tarballs)) named.add(needed)
  return false
})
step(
  `npm install in ${process.cwd()}`,
  "npm",
  ["install", ...[...named].map((name) => tarballs.get(name).tarball), ...others],
  process.cwd(),
)
