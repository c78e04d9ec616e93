/**
 * Benchmarks B1 and B2 (DESIGN.md) for the SQLite store.
 *
 * B1: the store's cost on one call's critical path (begin = intent row, then update = task id
 *     recorded: two durable commits), against raw better-sqlite3 doing the same two durable
 *     commits (same schema, same row, same `synchronous`). Target: ≤ 1.3×.
 * B2: 1,000 concurrent calls (begin + update each): calls durably recorded per second with group
 *     commit, against the same store committing one write at a time (`maxBatchSize: 1`), and
 *     against raw better-sqlite3 doing the calls one after another. Target: ≥ 5×.
 *
 * A and B runs are interleaved (ABBA), several repetitions; medians and spread are printed as
 * Markdown. Run: `pnpm --filter @mcp-handles/store-sqlite bench [--smoke] [--synchronous NORMAL]
 * [--reps N] [--dir PATH]`.
 */
import { execSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as Encryption from "@mcp-handles/core/Encryption"
import type { HandleStore } from "@mcp-handles/core/HandleStore"
import { NodeCipher } from "@mcp-handles/platform-node"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { storeCall } from "./call.js"
import { rawDriver } from "./raw.js"

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(name)
const option = (name: string) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const smoke = flag("--smoke")
const synchronous: SqliteStore.Synchronous = option("--synchronous") === "NORMAL" ? "NORMAL" : "FULL"
const reps = Number(option("--reps") ?? (smoke ? 2 : 15))
// Short blocks, many of them, alternating: on a shared machine the two sides of each pair
// then see the same background load.
const b1Calls = smoke ? 20 : 100
const b1Pairs = smoke ? 2 : 4 * reps
const b2Calls = smoke ? 50 : 1000
const baseDir = option("--dir") ?? os.tmpdir()

const loadBefore = os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(" ")
const dir = fs.mkdtempSync(path.join(baseDir, "mcp-handles-bench-"))
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}
const spread = (xs: ReadonlyArray<number>, digits = 1) =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`

/** CPU time (user + system) of this process over the last `time`, in ms. */
let lastCpuMs = 0

const time = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const cpu = process.cpuUsage()
    const start = performance.now()
    yield* effect
    const elapsed = performance.now() - start
    const used = process.cpuUsage(cpu)
    lastCpuMs = (used.user + used.system) / 1000
    return elapsed
  })

/** Opens a store on a new file in `dir`, closed with the surrounding scope. */
const openStore = (name: string, options: Partial<SqliteStore.Options> = {}) =>
  SqliteStore.make({ filename: path.join(dir, `${name}.db`), synchronous, ...options })

const program = Effect.scoped(
  Effect.gen(function* () {
    // ---- B1: one caller, per-call latency ----------------------------------------------------
    const store = yield* openStore("b1-store")
    // The raw file gets the very same schema, made by the store, then closed.
    yield* Effect.scoped(openStore("b1-raw"))
    const raw = rawDriver(path.join(dir, "b1-raw.db"), synchronous)
    yield* Effect.addFinalizer(() => Effect.sync(raw.close))

    const storeBlock = time(Effect.repeatN(storeCall(store), b1Calls - 1))
    // The same store with encryption at rest on (issue 32): a fixed key, on `node:crypto` as the
    // client and the CLI run it, measured beside it. `b1-instructions.ts` counts the same loop in
    // instructions (either cipher), for a machine too loaded to time.
    const encryption = yield* Encryption.make(
      { current: "bench", keys: new Map([["bench", new Uint8Array(32).fill(7)]]) },
      NodeCipher.cipher,
    )
    const encrypted = EncryptedStore.make(yield* openStore("b1-encrypted"), encryption)
    const encryptedBlock = time(Effect.repeatN(storeCall(encrypted), b1Calls - 1))
    const rawBlock = time(
      Effect.sync(() => {
        for (let i = 0; i < b1Calls; i++) raw.call()
      }),
    )
    yield* storeBlock // warm-up, not counted
    yield* rawBlock
    yield* encryptedBlock
    const b1Encrypted: Array<number> = []
    const b1EncryptedRatios: Array<number> = []
    const b1Store: Array<number> = []
    const b1Raw: Array<number> = []
    const b1Ratios: Array<number> = []
    for (let rep = 0; rep < b1Pairs; rep++) {
      // The encrypted block runs before the store/raw pair on odd reps and after it on even ones,
      // so that a drift of the machine in either direction cancels out of encrypted/plain.
      const encryptedFirst = rep % 2 === 1
      const e0 = encryptedFirst ? ((yield* encryptedBlock) * 1000) / b1Calls : 0
      const order = rep % 2 === 0 ? ["store", "raw"] : ["raw", "store"]
      let s = 0
      let r = 0
      for (const side of order) {
        if (side === "store") s = ((yield* storeBlock) * 1000) / b1Calls
        else r = ((yield* rawBlock) * 1000) / b1Calls
      }
      b1Store.push(s)
      b1Raw.push(r)
      b1Ratios.push(s / r)
      const e = encryptedFirst ? e0 : ((yield* encryptedBlock) * 1000) / b1Calls
      b1Encrypted.push(e)
      b1EncryptedRatios.push(e / s)
    }

    // ---- B2: 1,000 concurrent calls -----------------------------------------------------------
    const grouped = yield* openStore("b2-group")
    // Issue 32: the same group-committed store with encryption at rest, beside it.
    const groupedEncrypted = EncryptedStore.make(yield* openStore("b2-group-encrypted"), encryption)
    const single = yield* openStore("b2-single", { maxBatchSize: 1 })
    yield* Effect.scoped(openStore("b2-raw"))
    const rawSeq = rawDriver(path.join(dir, "b2-raw.db"), synchronous)
    yield* Effect.addFinalizer(() => Effect.sync(rawSeq.close))
    const concurrent = (s: HandleStore) =>
      time(
        Effect.all(
          Array.from({ length: b2Calls }, () => storeCall(s)),
          { concurrency: "unbounded", discard: true },
        ),
      )
    const sequential = time(
      Effect.sync(() => {
        for (let i = 0; i < b2Calls; i++) rawSeq.call()
      }),
    )
    yield* concurrent(grouped)
    yield* concurrent(groupedEncrypted)
    yield* concurrent(single)
    yield* sequential
    const batched = time(Effect.sync(() => rawSeq.calls(b2Calls)))
    // What 1,000 concurrent callers cost before they touch any store: the share of a call's
    // CPU that no store can remove.
    const callersOnly = time(
      Effect.all(
        Array.from({ length: b2Calls }, () => Effect.zipRight(Effect.yieldNow(), Effect.yieldNow())),
        { concurrency: "unbounded", discard: true },
      ),
    )
    yield* batched
    yield* callersOnly
    const perSecond = (ms: number) => (b2Calls * 1000) / ms
    const sides = {
      group: { label: "store, group commit", run: concurrent(grouped) },
      encrypted: {
        label: "store, group commit, encrypted at rest (node:crypto)",
        run: concurrent(groupedEncrypted),
      },
      single: { label: "store, one write per commit (maxBatchSize 1)", run: concurrent(single) },
      raw: { label: "raw better-sqlite3, one call after another", run: sequential },
      batched: { label: "(reference) raw better-sqlite3, the calls in two transactions", run: batched },
      callers: { label: `(reference) the ${b2Calls} caller fibers alone, no store`, run: callersOnly },
    }
    type Side = keyof typeof sides
    const order: ReadonlyArray<Side> = ["group", "encrypted", "single", "raw", "batched", "callers"]
    // Per side: calls/s, CPU µs per call, and CPU time over wall time (whether a side waits on
    // the disk or on the processor, and how much the processor is shared with other work).
    const rate = Object.fromEntries(order.map((side) => [side, [] as Array<number>])) as Record<
      Side,
      Array<number>
    >
    const cpu = Object.fromEntries(order.map((side) => [side, [] as Array<number>])) as Record<
      Side,
      Array<number>
    >
    const share = Object.fromEntries(order.map((side) => [side, [] as Array<number>])) as Record<
      Side,
      Array<number>
    >
    const b2Ratios: Array<number> = []
    const b2EncryptedRatios: Array<number> = []
    for (let rep = 0; rep < reps; rep++) {
      for (const side of rep % 2 === 0 ? order : [...order].reverse()) {
        const ms = yield* sides[side].run
        rate[side].push(perSecond(ms))
        cpu[side].push((lastCpuMs * 1000) / b2Calls)
        share[side].push(lastCpuMs / ms)
      }
      b2Ratios.push((rate.group[rep] as number) / (rate.single[rep] as number))
      b2EncryptedRatios.push((rate.encrypted[rep] as number) / (rate.group[rep] as number))
    }

    const sqliteVersion = (() => {
      const db = new Database(":memory:")
      const v = db.prepare("SELECT sqlite_version() AS v").get() as { v: string }
      db.close()
      return v.v
    })()
    let fsType = "unknown"
    try {
      fsType = execSync(`df -T ${JSON.stringify(dir)} | tail -1 | awk '{print $2}'`)
        .toString()
        .trim()
    } catch {}
    const cpuModel = os.cpus()[0]?.model ?? "unknown"
    const ratio = (xs: ReadonlyArray<number>) => `${median(xs).toFixed(2)}× (per-rep ${spread(xs, 2)})`

    const lines = [
      `Machine: ${os.cpus().length} CPUs (\`nproc\` ${os.availableParallelism()}), ${cpuModel}; Node ${process.version}; SQLite ${sqliteVersion}; database on ${fsType}; synchronous=${synchronous}; load average before the run ${loadBefore}${smoke ? " (SMOKE SIZE: not a measurement)" : ""}.`,
      "",
      `B1: ${b1Pairs} interleaved pairs of blocks of ${b1Calls} calls, one caller (µs per call = begin + update, two durable commits)`,
      "",
      "| side | median µs/call | spread (min–max) |",
      "| --- | --- | --- |",
      `| store (SqliteStore) | ${median(b1Store).toFixed(1)} | ${spread(b1Store)} |`,
      `| raw better-sqlite3 | ${median(b1Raw).toFixed(1)} | ${spread(b1Raw)} |`,
      `| store, encrypted at rest (EncryptedStore on node:crypto) | ${median(b1Encrypted).toFixed(1)} | ${spread(b1Encrypted)} |`,
      "",
      `B1 ratio store/raw: **${ratio(b1Ratios)}**, target ≤ 1.3×`,
      "",
      `B1 ratio encrypted/plain (encryption at rest, issue 32): **${ratio(b1EncryptedRatios)}**, target ≤ 1.5×`,
      "",
      `B2: ${reps} interleaved rounds of ${b2Calls} concurrent calls (calls durably recorded per second; each call is begin + update)`,
      "",
      "| side | median calls/s | spread (min–max) | median CPU µs/call | CPU time / wall time |",
      "| --- | --- | --- | --- | --- |",
      ...order.map(
        (side) =>
          `| ${sides[side].label} | ${median(rate[side]).toFixed(0)} | ${spread(rate[side], 0)} | ${median(cpu[side]).toFixed(1)} | ${median(share[side]).toFixed(2)} |`,
      ),
      "",
      `B2 ratio group commit / one-at-a-time (same store): **${ratio(b2Ratios)}**, target ≥ 5×; vs raw sequential: ${(median(rate.group) / median(rate.raw)).toFixed(2)}×`,
      "",
      `B2 with encryption at rest (issue 32): group-committed calls/s encrypted/plain ${ratio(b2EncryptedRatios)} (no target; 1× is free)`,
    ]
    console.log(lines.join("\n"))
  }),
)

Effect.runPromise(program)
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => fs.rmSync(dir, { recursive: true, force: true }))
