import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeServer from "@mcp-handles/fake-server/FakeServer"
import { TestDatabase } from "@mcp-handles/store-postgres/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as esbuild from "esbuild"
import { afterAll, describe, expect, it } from "vitest"

// What ships: dist/, as `pnpm build` leaves it (tsc's declarations and the esbuild bundle).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
if (!fs.existsSync(path.join(dist, "index.js")))
  throw new Error("packages/client/dist is not built: run pnpm build")

const filesUnder = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
    )
/** The files npm packs: `files` is dist without dist/internal (declarations of non-public code). */
const packed = ["dist", "!dist/internal"]
const shipped = filesUnder(dist).filter((file) => !file.startsWith(path.join(dist, "internal")))
/** Every module a file imports (statically or dynamically), as esbuild parses it. */
const imports = async (
  file: string,
): Promise<Array<{ readonly path: string; readonly kind: esbuild.ImportKind }>> => {
  const { metafile } = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    plugins: [
      {
        name: "all-external",
        setup: (build) =>
          build.onResolve({ filter: /.*/ }, (args) =>
            args.kind === "entry-point" ? undefined : { path: args.path, external: true },
          ),
      },
    ],
  })
  return Object.values(metafile.inputs).flatMap((input) => input.imports)
}
const specifiers = async (file: string) => (await imports(file)).map((entry) => entry.path)

/** The modules loading `file` loads before any of its code runs (its static imports, transitively). */
const loadedWith = async (file: string, seen = new Set<string>()): Promise<Set<string>> => {
  for (const entry of await imports(file)) {
    if (entry.kind !== "import-statement" || seen.has(entry.path)) continue
    seen.add(entry.path)
    if (entry.path.startsWith(".")) await loadedWith(path.resolve(path.dirname(file), entry.path), seen)
  }
  return seen
}
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/")

describe("the package", () => {
  it("ships dist without dist/internal (whose declarations name core and Effect)", () => {
    expect(manifest.files).toEqual(packed)
  })

  it("has no Effect among its dependencies or peers", () => {
    const named = ["dependencies", "peerDependencies", "optionalDependencies"].flatMap((field) =>
      Object.keys(manifest[field] ?? {}),
    )
    expect(named.filter((name) => /^(effect$|@effect\/)/.test(name))).toEqual([])
  })

  it("imports, at run time, only its dependencies and Node's modules: Effect and mcp-handles are inside", async () => {
    const code = shipped.filter((file) => file.endsWith(".js"))
    expect(code.length).toBeGreaterThan(1)
    const all = (await Promise.all(code.map(specifiers))).flat()
    const external = [...new Set(all.filter((s) => !s.startsWith(".")))]
    expect(external.filter((s) => /^(effect|@effect\/|@mcp-handles\/)/.test(s))).toEqual([])
    expect(
      external.filter((s) => !s.startsWith("node:") && manifest.dependencies[packageOf(s)] === undefined),
    ).toEqual([])
    // The stores come as chunks of their own, loaded when chosen: the entry loads no store driver.
    const loaded = [...(await loadedWith(path.join(dist, "index.js")))].filter((s) => !s.startsWith("."))
    expect(loaded).not.toContain("better-sqlite3")
    expect(loaded).not.toContain("pg")
  })

  it("declares its types without Effect or core: an app on Effect 4 resolves nothing of Effect 3", () => {
    const declarations = shipped.filter((file) => file.endsWith(".d.ts"))
    expect(declarations.map((file) => path.basename(file))).toContain("index.d.ts")
    // Declarations hold no code: every module they name is in an import or export clause, or import("...").
    const imported = declarations.flatMap((file) =>
      [...fs.readFileSync(file, "utf8").matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map(
        (match) => match[1] as string,
      ),
    )
    expect(imported.filter((s) => !s.startsWith("."))).toEqual([])
  })
})

describe("openTaskClient, from the bundle", () => {
  const server = FakeServer.unsafeMake({
    tools: [
      {
        name: "report",
        shape: "task",
        durationMs: 300,
        pollIntervalMs: 250,
        outcome: { kind: "result", text: "done" },
      },
    ],
  })
  const servers = [{ name: "fake", url: "http://fake.test/mcp" }]
  const http = {
    fetch: (input: string | URL | Request, init?: RequestInit) => server.handler(new Request(input, init)),
  }
  const load = (): Promise<typeof import("../src/index.js")> => import(path.join(dist, "index.js"))
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-client-"))
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

  const roundTrip = async (store: import("../src/index.js").Store, key: string) => {
    const { openTaskClient } = await load()
    const client = await openTaskClient({ store, servers, http })
    try {
      const handle = await client.callTool("fake", "report", { n: 1 }, { key })
      const outcome = await handle.outcome()
      expect(outcome._tag === "Completed" && outcome.result.content).toEqual([{ type: "text", text: "done" }])
      expect((await client.get(key)).status).toBe("completed")
    } finally {
      await client.close()
    }
  }

  it("runs a call to its end on each store", async () => {
    await roundTrip({ kind: "memory" }, "m1")
    const filename = path.join(scratch, "tasks.db")
    await roundTrip({ kind: "sqlite", filename, busyTimeout: "2s", commitDelay: 0 }, "s1")
    expect(fs.existsSync(filename)).toBe(true)

    // A fresh schema on the tests' database, dropped afterwards.
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { url, schema } = Context.get(
            yield* Layer.build(TestDatabase.layerClient()),
            TestDatabase.TestSchema,
          )
          const store = { kind: "postgres", url, schema, maxConnections: 2, retry: { budget: "5s" } } as const
          yield* Effect.promise(() => roundTrip(store, "p1"))
        }),
      ),
    )
  })

  it("refuses store options it cannot read, with a tagged error, before opening anything", async () => {
    const { openTaskClient } = await load()
    await expect(
      openTaskClient({
        store: { kind: "sqlite", filename: path.join(scratch, "x.db"), busyTimeout: "soon" as "1s" },
        servers,
      }),
    ).rejects.toMatchObject({ _tag: "InvalidDuration" })
    expect(fs.existsSync(path.join(scratch, "x.db"))).toBe(false)
    await expect(
      openTaskClient({ store: { kind: "mysql" } as unknown as { kind: "memory" }, servers }),
    ).rejects.toMatchObject({ _tag: "InvalidStore", message: expect.stringContaining('"mysql"') })
    await expect(
      openTaskClient({ store: { kind: "memory" }, servers, http: { requestTimeout: "-1s" as "1s" } }),
    ).rejects.toMatchObject({ _tag: "InvalidDuration" })
  })
})
