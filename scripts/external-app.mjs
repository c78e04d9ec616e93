#!/usr/bin/env node
/**
 * The examples of the READMEs and the docs/ guides, verbatim, in an app outside the workspace,
 * installed the way a user installs mcp-handles: the published packages are packed with `pnpm
 * pack`, a scratch project in a fresh temporary directory installs the tarballs with npm next to
 * the newest Effect 3, the TypeScript examples are compiled there (with `moduleResolution`
 * nodenext, and type-checked again with node10), and each one runs to its end, in a directory of
 * its own, against the packed `fake-mcp-server` as shipped (its default tools, no configuration:
 * what a reader who follows the README starts). An example passes when it exits 0 by itself: a
 * client that kept the process alive after its close fails it. In the same app, one process uses
 * both `@mcp-handles/client` (its own Effect inside) and core's Effect API. Then the examples of
 * packages/client/README.md run again in a second app that installs only that package, as its
 * README says: first with no effect at all in its tree, then next to effect 4.1.
 *
 * The examples are the fenced blocks right below a marker line, in README.md, the guides in
 * docs/*.md and packages/<name>/README.md, so that the docs and this check cannot drift apart:
 *
 *   <!-- example: NAME -->                      a `ts` block: compiled and run;
 *                                               an `sh` block: run line by line in the app
 *   <!-- example: NAME; compile only -->        compiled, not run
 *   <!-- example: NAME; needs DATABASE_URL -->  run when DATABASE_URL is set, against a database
 *                                               created for the run and dropped after it
 *   <!-- example: NAME; prints TEXT -->         passes only if its output holds TEXT (that the
 *                                               call completed, not merely that the process ended)
 *   <!-- example: NAME; nodenext only -->       left out of the node10 type check: for an example
 *                                               importing a framework's subpath export that has no
 *                                               node10 fallback (`@langchain/langgraph/prebuilt`)
 *   <!-- example: NAME; file F; run COMMAND -->  run as its text tells a reader to: saved as F and
 *                                               run by COMMAND (`npx tsx index.mts`) in a folder of
 *                                               the app, rather than compiled; the text around the
 *                                               block must say both, in backticks
 *
 *
 * In `sh` blocks, `npm install @mcp-handles/<name>` installs that package's tarball. They run
 * first, in the order they appear (README.md, then docs/*.md and the packages' READMEs, each by
 * name), in an empty directory: the app is made as README.md makes it (`npm init -y`, a CommonJS
 * package), not by this script. Every TypeScript example is type-checked as an ES module (`.mts`,
 * as the README tells readers to save it). The examples read the server's URL from
 * RESEARCH_MCP_URL, and PostgreSQL's from DATABASE_URL.
 *
 * Usage: node scripts/external-app.mjs [--keep]   (needs the npm registry; --keep leaves the
 * scratch directory in place and prints it)
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { collectExamples, ExampleError } from "./examples.mjs"
import { closure, pack } from "./packing.mjs"
import { killGroup, runGroup, spawnGroup } from "./testing/process-groups.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const keep = process.argv.includes("--keep")
const exampleTimeoutMs = Number(process.env.EXTERNAL_APP_EXAMPLE_TIMEOUT_MS ?? 60_000)
const installTimeoutMs = 10 * 60_000
const started = Date.now()
const log = (line) => console.log(`external-app [${Math.round((Date.now() - started) / 1000)} s]: ${line}`)
const indent = (text) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n")

class Failure extends Error {}

/** Runs a command to its end; fails with its output unless it exits 0. */
const run = async (what, command, args, options = {}) => {
  const { timeoutMs = installTimeoutMs, ...rest } = options
  const result = await runGroup(command, args, { timeoutMs, ...rest })
  if (result.code !== 0) {
    const ending =
      result.signal === "SIGKILL" ? `did not end within ${timeoutMs / 1000} s` : `exited ${result.code}`
    throw new Failure(`${what} ${ending}\n${indent(`${result.stdout}\n${result.stderr}`)}`)
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// The app
// ---------------------------------------------------------------------------------------------

const pnpm = (args, options) => run(`pnpm ${args.join(" ")}`, "npx", ["-y", "pnpm@12.4.2", ...args], options)

/**
 * `npm install @mcp-handles/x` installs the tarball of x. None of them is on the registry, so the
 * @mcp-handles packages x needs and the app does not hold yet come as tarballs along with it (a
 * user's npm would fetch them). Other lines run as they are.
 */
const shellLine = (line, tarballs, app) => {
  const words = line.trim().split(/\s+/)
  if (words[0] !== "npm" || words[1] !== "install") return line
  const named = new Set()
  const args = words.slice(2).filter((word) => {
    const name = word.replace(/^(@mcp-handles\/[^@]+)@.*$/, "$1")
    if (!name.startsWith("@mcp-handles/")) return true
    for (const needed of closure(name, tarballs)) named.add(needed)
    return false
  })
  const held = (name) => fs.existsSync(path.join(app, "node_modules", name, "package.json"))
  const packed = [...named].filter((name) => !held(name) || words.includes(name))
  return [
    "npm",
    "install",
    "--no-audit",
    "--no-fund",
    ...packed.map((name) => tarballs.get(name).tarball),
    ...args,
  ].join(" ")
}

/**
 * npm's warnings are shown; a peer dependency it had to override (ERESOLVE) fails the check, as
 * the app would then run with a copy of effect or @effect/* that mcp-handles does not support.
 */
const checkNpmOutput = (what, result) => {
  const warnings = `${result.stdout}\n${result.stderr}`
    .split("\n")
    .filter((line) => /^npm (warn|WARN)/.test(line))
  if (warnings.length > 0) console.log(indent(warnings.join("\n")))
  if (warnings.some((line) => /ERESOLVE|peer dep/i.test(line))) {
    throw new Failure(`${what}: npm had to override a peer dependency`)
  }
}

/** Every installed copy of a package in the app (a second copy of effect breaks layers). */
const copiesOf = (app, name) => {
  const found = []
  const visit = (modules) => {
    if (!fs.existsSync(modules)) return
    const candidate = path.join(modules, name, "package.json")
    if (fs.existsSync(candidate)) found.push(JSON.parse(fs.readFileSync(candidate, "utf8")).version)
    for (const entry of fs.readdirSync(modules)) {
      const scoped = entry.startsWith("@")
        ? fs.readdirSync(path.join(modules, entry)).map((inner) => path.join(modules, entry, inner))
        : [path.join(modules, entry)]
      for (const dir of scoped) visit(path.join(dir, "node_modules"))
    }
  }
  visit(path.join(app, "node_modules"))
  return found
}

/** Each framework adapter and the framework it is a peer of. */
const frameworks = {
  "@mcp-handles/ai-sdk": "ai",
  "@mcp-handles/langchain": "@langchain/core",
  "@mcp-handles/openai-agents": "@openai/agents-core",
}

/**
 * A framework adapter runs beside one copy of its framework, the framework's newest release: the
 * README's `npm install` brings it, and a second copy would split the framework's types.
 */
const checkFrameworks = async (app, tarballs, env) => {
  for (const [adapter, framework] of Object.entries(frameworks)) {
    if (!tarballs.has(adapter)) throw new Failure(`no packed package ${adapter}`)
    const copies = copiesOf(app, framework)
    const latest = (
      await run(`npm view ${framework} version`, "npm", ["view", framework, "version"], { cwd: app, env })
    ).stdout.trim()
    if (copies.length !== 1 || copies[0] !== latest) {
      throw new Failure(
        `${adapter} should run beside one copy of ${framework} ${latest} (its newest release); the app holds: ${copies.join(", ") || "none"}`,
      )
    }
    log(`${adapter} beside ${framework} ${latest}, its newest release`)
  }
}

/**
 * `fake-mcp-server` from the packed tarball, as shipped (no configuration: the tools its README
 * lists, which the examples call); its URL and a stop function.
 */
const startServer = async (app) => {
  const bin = path.join(app, "node_modules", ".bin", "fake-mcp-server")
  const child = spawnGroup(bin, ["--port", "0"], {
    cwd: app,
    stdio: ["ignore", "pipe", "inherit"],
  })
  const url = await new Promise((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Failure("fake-mcp-server printed no URL within 20 s")), 20_000)
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      out += chunk
      const line = out.split("\n")
      if (line.length > 1) {
        clearTimeout(timer)
        resolve(line[0].trim())
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Failure(`fake-mcp-server exited ${code} before printing its URL`))
    })
  })
  return { url, stop: () => killGroup(child) }
}

/** A database of its own for the PostgreSQL examples, made through the app's `pg`. */
const makeDatabase = async (app, adminUrl) => {
  const pg = createRequire(path.join(app, "package.json"))("pg")
  const name = `mcp_handles_external_${process.pid}_${Math.floor(Math.random() * 1e6)}`
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    outDir: "dist",
    rootDir: "src",
    types: ["node"],
    skipLibCheck: true,
  },
  include: ["src"],
}

// ---------------------------------------------------------------------------------------------
// Steps of an app's life: install, compile, run
// ---------------------------------------------------------------------------------------------

const clientReadme = "packages/client/README.md"

const writeManifest = (app, name) =>
  fs.writeFileSync(
    path.join(app, "package.json"),
    `${JSON.stringify({ name, private: true, type: "module" }, null, 2)}\n`,
  )

/** The `sh` examples' lines, run in `app` in order (`npm install @mcp-handles/x`: the tarballs). */
const runShellExamples = async (shExamples, app, tarballs, env) => {
  for (const example of shExamples) {
    for (const line of example.source.split("\n")) {
      if (line.trim() === "" || line.trim().startsWith("#")) continue
      log(`${example.name}: ${line.trim()}`)
      const result = await run(
        `${example.where}: ${line.trim()}`,
        "sh",
        ["-c", shellLine(line, tarballs, app)],
        {
          cwd: app,
          env,
        },
      )
      // The first lines say it ran; a long help text need not fill the CI log.
      if (!line.trim().startsWith("npm install"))
        console.log(indent(result.stdout.split("\n").slice(0, 6).join("\n")))
      else checkNpmOutput(`${example.where}: ${line.trim()}`, result)
    }
  }
}

/** One copy of effect whose version starts with `major` in the app, or none when it is undefined. */
const expectEffect = (app, major) => {
  const effects = copiesOf(app, "effect")
  const wanted = major === undefined ? "no effect" : `one copy of effect ${major.replace(/\.$/, "")}`
  const ok = major === undefined ? effects.length === 0 : effects.length === 1 && effects[0].startsWith(major)
  if (!ok) throw new Failure(`${app} should hold ${wanted}, it holds: ${effects.join(", ") || "none"}`)
  log(`${path.basename(app)}: ${major === undefined ? wanted : `one copy of effect: ${effects[0]}`}`)
}

const npmInstall = async (what, app, env, args) => {
  log(`${path.basename(app)}: ${what}`)
  const result = await run(what, "npm", ["install", "--no-audit", "--no-fund", ...args], { cwd: app, env })
  checkNpmOutput(what, result)
}

const installToolchain = (app, env, extra) =>
  npmInstall("npm install (toolchain)", app, env, [
    "--save-dev",
    "typescript@~5.9.3",
    "@types/node@^20",
    ...extra,
  ])

const compile = async (app, typescript, env, { node10 }) => {
  // As ES modules whatever the app's package.json says (`npm init -y` makes it CommonJS): the
  // examples use top-level await.
  for (const example of typescript)
    fs.writeFileSync(path.join(app, "src", `${example.name}.mts`), example.source)
  fs.writeFileSync(path.join(app, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`)
  log(`${path.basename(app)}: compiling ${typescript.length} example(s) (moduleResolution nodenext)`)
  await run("tsc", "npx", ["tsc", "-p", "tsconfig.json"], { cwd: app, env })
  if (!node10) return
  const checked = typescript.filter((example) => !example.nodenextOnly)
  log(`type-checking ${checked.length} of them again with moduleResolution node10`)
  const node10Config = {
    extends: "./tsconfig.json",
    include: [],
    files: checked.map((e) => `src/${e.name}.mts`),
  }
  fs.writeFileSync(path.join(app, "tsconfig.node10.json"), `${JSON.stringify(node10Config, null, 2)}\n`)
  await run(
    "tsc (node10)",
    "npx",
    ["tsc", "-p", "tsconfig.node10.json", "--noEmit", "--module", "esnext", "--moduleResolution", "node10"],
    { cwd: app, env },
  )
}

/**
 * Runs an example in `cwd`, a fresh directory (the SQLite default must create its own): one its
 * text says how to run (`file`, `runBy`) is saved there under that name and run by that command,
 * in a folder inside the app (where its packages resolve); any other runs compiled.
 */
const runExample = async (example, app, cwd, env) => {
  const what = `${example.where} (${example.name}, in ${path.basename(app)})`
  const asTold = example.runBy !== undefined
  const dir = asTold ? path.join(app, path.basename(cwd)) : cwd
  fs.mkdirSync(dir)
  let result
  if (asTold) {
    fs.writeFileSync(path.join(dir, example.file), example.source)
    log(`${example.name}: ${example.runBy} (as its text says)`)
    result = await run(what, "sh", ["-c", example.runBy], { cwd: dir, env, timeoutMs: exampleTimeoutMs })
  } else {
    result = await run(what, process.execPath, [path.join(app, "dist", `${example.name}.mjs`)], {
      cwd: dir,
      env,
      timeoutMs: exampleTimeoutMs,
    })
  }
  const missing = example.prints.filter((text) => !result.stdout.includes(text))
  if (missing.length > 0) {
    throw new Failure(
      `${example.where} (${example.name}) exited 0 but did not print ${missing.map((text) => JSON.stringify(text)).join(", ")}\n${indent(`${result.stdout}\n${result.stderr}`)}`,
    )
  }
  log(`${example.name}: ran to its end in ${path.basename(app)} and exited 0`)
  console.log(indent(`${result.stdout}${result.stderr}`))
}

/**
 * SQLite's driver as built for the first app, offered to the next app's install as a local
 * prebuild (prebuild-install looks in `npm_config_<package>_local_prebuilds` before it downloads).
 * Where no prebuilt binary can be fetched, npm would compile SQLite again: minutes, more than the
 * rest of the second app takes.
 */
const localPrebuild = (app, scratch) => {
  const driver = path.join(app, "node_modules", "better-sqlite3")
  const { version } = JSON.parse(fs.readFileSync(path.join(driver, "package.json"), "utf8"))
  const dir = path.join(scratch, "prebuilds")
  fs.mkdirSync(dir, { recursive: true })
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  const made = spawnSync("tar", ["czf", path.join(dir, name), "build/Release/better_sqlite3.node"], {
    cwd: driver,
  })
  if (made.status !== 0) throw new Failure(`could not pack better-sqlite3's binary: ${made.stderr}`)
  return { npm_config_better_sqlite3_local_prebuilds: dir }
}

/**
 * An app on Effect 3 that uses both APIs in one process: the Promise package (its own Effect
 * inside) and core's Effect API (the app's effect). Each call completes; neither copy of
 * Effect sees the other's values.
 */
const bothCopies = `import { openTaskClient } from "@mcp-handles/client"
import { HttpWire, Polling, TaskClient } from "@mcp-handles/core"
import { MemoryStore } from "@mcp-handles/store-memory"
import { Effect, Layer } from "effect"

const servers = [{ name: "research", url: process.env.RESEARCH_MCP_URL }]
const promised = await openTaskClient({ store: { kind: "memory" }, servers })
try {
  const handle = await promised.callTool("research", "slow_compute", { seconds: 1, label: "promises" }, { key: "both-1" })
  const viaEffect = Effect.gen(function* () {
    const client = yield* TaskClient.TaskClient
    const call = yield* client.callTool("research", "slow_compute", { seconds: 1, label: "effects" }, { key: "both-2" })
    return yield* call.outcome
  }).pipe(
    Effect.provide(
      TaskClient.layer({ servers }).pipe(
        Layer.provide(Layer.mergeAll(MemoryStore.layer, HttpWire.layer(), Polling.layer())),
      ),
    ),
  )
  const [fromPromise, fromEffect] = await Promise.all([handle.outcome(), Effect.runPromise(viaEffect)])
  if (fromPromise._tag !== "Completed" || fromEffect._tag !== "Completed")
    throw new Error(\`expected two completed calls, got \${fromPromise._tag} and \${fromEffect._tag}\`)
  console.log("both APIs in one process:", fromPromise._tag, fromEffect._tag)
} finally {
  await promised.close()
}
`

const runBothCopies = async (app, cwd, env) => {
  fs.writeFileSync(path.join(app, "dist", "both-copies.mjs"), bothCopies)
  await runExample(
    {
      name: "both-copies",
      where: "scripts/external-app.mjs",
      prints: ["both APIs in one process: Completed Completed"],
    },
    app,
    cwd,
    env,
  )
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------

const main = async (cleanups) => {
  const examples = collectExamples()
  if (!examples.some((example) => example.language === "ts" && !example.compileOnly)) {
    throw new Failure("no runnable example found in the READMEs or docs/")
  }
  log(`${examples.length} example(s): ${examples.map((example) => example.name).join(", ")}`)

  log("building")
  await pnpm(["build"], { cwd: root })

  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-external-")))
  if (!path.relative(root, scratch).startsWith("..")) throw new Failure(`${scratch} is inside the workspace`)
  cleanups.push(() => {
    if (keep) log(`kept ${scratch}`)
    else fs.rmSync(scratch, { recursive: true, force: true })
  })
  const tarballDir = path.join(scratch, "tarballs")
  const app = path.join(scratch, "app")
  fs.mkdirSync(tarballDir)
  fs.mkdirSync(path.join(app, "src"), { recursive: true })

  log("packing")
  const tarballs = await pack(tarballDir, pnpm)
  log(`packed ${[...tarballs.keys()].join(", ")}`)

  const env = { ...process.env, npm_config_update_notifier: "false" }
  // No manifest of ours: the README's first lines make the app (`npm init -y`).
  await runShellExamples(
    examples.filter((candidate) => candidate.language === "sh"),
    app,
    tarballs,
    env,
  )
  const manifest = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"))
  log(`the app as the README made it: "type": ${JSON.stringify(manifest.type ?? "(none: commonjs)")}`)
  expectEffect(app, "3.")
  await checkFrameworks(app, tarballs, env)

  // The app's own toolchain, and the fake server the examples talk to.
  await installToolchain(app, env, [tarballs.get("@mcp-handles/fake-server").tarball])
  const typescript = examples.filter((example) => example.language === "ts")
  await compile(app, typescript, env, { node10: true })

  const server = await startServer(app)
  cleanups.push(server.stop)
  log(`fake-mcp-server at ${server.url}`)
  let database
  const runnable = typescript.filter((example) => !example.compileOnly)
  for (const example of runnable) {
    if (example.needsDatabase && process.env.DATABASE_URL === undefined) {
      log(`${example.name}: skipped (DATABASE_URL is not set)`)
      continue
    }
    if (example.needsDatabase && database === undefined) {
      database = await makeDatabase(app, process.env.DATABASE_URL)
      cleanups.push(database.drop)
    }
    await runExample(example, app, path.join(scratch, `run-${example.name}`), {
      ...env,
      RESEARCH_MCP_URL: server.url,
      ...(database === undefined ? {} : { DATABASE_URL: database.url }),
    })
  }
  await runBothCopies(app, path.join(scratch, "run-both-copies"), { ...env, RESEARCH_MCP_URL: server.url })

  // The Promise package in an app of its own: with no effect at all, then next to effect 4.
  const standalone = path.join(scratch, "standalone")
  fs.mkdirSync(path.join(standalone, "src"), { recursive: true })
  writeManifest(standalone, "standalone-app")
  const standaloneEnv = { ...env, ...localPrebuild(app, scratch) }
  const ofClient = examples.filter((example) => example.where.startsWith(`${clientReadme}:`))
  await runShellExamples(
    ofClient.filter((example) => example.language === "sh"),
    standalone,
    tarballs,
    standaloneEnv,
  )
  expectEffect(standalone, undefined)
  await installToolchain(standalone, standaloneEnv, [])
  const clientExamples = ofClient.filter((example) => example.language === "ts" && !example.compileOnly)
  if (clientExamples.length === 0) throw new Failure(`${clientReadme} has no runnable example`)
  for (const step of ["no effect", "effect 4.1"]) {
    if (step === "effect 4.1") {
      await npmInstall("npm install effect@4.1", standalone, standaloneEnv, ["effect@4.1"])
      expectEffect(standalone, "4.1.")
    }
    await compile(standalone, clientExamples, env, { node10: false })
    for (const example of clientExamples) {
      const cwd = path.join(scratch, `run-standalone-${step.replace(/\W+/g, "-")}-${example.name}`)
      await runExample(example, standalone, cwd, { ...env, RESEARCH_MCP_URL: server.url })
    }
  }
  log("every example installed, compiled and ran")
}

const cleanups = []
const cleanUp = async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (error) {
      console.error(`external-app: clean-up failed: ${error instanceof Error ? error.message : error}`)
    }
  }
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    void cleanUp().then(() => process.exit(130))
  })
}
try {
  await main(cleanups)
  await cleanUp()
} catch (error) {
  await cleanUp()
  console.error(
    `external-app: FAILED: ${error instanceof Failure || error instanceof ExampleError ? error.message : (error?.stack ?? error)}`,
  )
  process.exit(1)
}
