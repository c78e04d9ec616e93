/**
 * One live process per instance id on a database file: a second live process is refused with
 * InstanceIdInUse; a holder killed with SIGKILL lets go at once; clients in one process share it.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { HandleStore } from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { killGroup, spawnGroup } from "../../../scripts/testing/process-groups.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))

const holdInstance = (filename: string, instanceId: string) =>
  Effect.async<ChildProcess>((resume) => {
    const child = spawnGroup(
      process.execPath,
      [path.join(here, "fixtures", "hold-instance.mjs"), filename, instanceId],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    )
    child.stdout?.once("data", () => resume(Effect.succeed(child)))
    child.once("error", (error) => resume(Effect.die(error)))
  })

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

describe("instance lock", () => {
  it.live(
    "a live process's id is refused, and freed at once when that process is killed",
    () =>
      Effect.gen(function* () {
        const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-")), "tasks.db")
        const store = yield* Layer.build(SqliteStore.layer({ filename })).pipe(
          Effect.map(Context.get(HandleStore)),
        )
        const child = yield* holdInstance(filename, "worker-1")
        const refused = yield* Effect.either(Effect.scoped(store.lockInstance("worker-1")))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("InstanceIdInUse")
        if (Either.isLeft(refused)) expect(refused.left.message).toContain(`process ${child.pid}`)
        // Another id is free meanwhile.
        yield* Effect.scoped(store.lockInstance("worker-2"))
        killGroup(child, "SIGKILL")
        yield* exited(child)
        // No waiting for a lease or a heartbeat to run out: the holder is gone, the id is free.
        yield* Effect.scoped(store.lockInstance("worker-1"))
      }).pipe(Effect.scoped),
    30_000,
  )

  it.live("clients of one process share a hold; it ends with the last of them", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-lock-"))
      const filename = path.join(dir, "tasks.db")
      const store = yield* Layer.build(SqliteStore.layer({ filename })).pipe(
        Effect.map(Context.get(HandleStore)),
      )
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Scope.extend(store.lockInstance("shared"), first)
      yield* Scope.extend(store.lockInstance("shared"), second)
      const lockFiles = () => fs.readdirSync(dir).filter((name) => name.endsWith(".lock"))
      expect(lockFiles()).toHaveLength(1)
      yield* Scope.close(first, Exit.void)
      expect(lockFiles()).toHaveLength(1)
      yield* Scope.close(second, Exit.void)
      expect(lockFiles()).toHaveLength(0)
    }).pipe(Effect.scoped),
  )
})
