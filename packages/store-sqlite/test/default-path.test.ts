/**
 * The default store of an app in a fresh folder: `SqliteStore.layer()` keeps its file in
 * `./.mcp-handles/tasks.db` and creates that directory; an explicit path still has to be in a
 * directory that exists (a typo is reported, not created).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import type * as HandleStore from "@mcp-handles/core/HandleStore"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

let dir = ""
let before = ""
beforeEach(() => {
  before = process.cwd()
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-default-")))
  process.chdir(dir)
})
afterEach(() => {
  process.chdir(before)
  fs.rmSync(dir, { recursive: true, force: true })
})

const opened = <E>(layer: Layer.Layer<HandleStore.HandleStore, E>) =>
  Effect.scoped(Layer.build(layer)).pipe(Effect.map(() => "opened" as const))

describe("SqliteStore default path", () => {
  it.effect("creates ./.mcp-handles (mode 0700) and the database in it when no filename is given", () =>
    Effect.gen(function* () {
      expect(SqliteStore.defaultFilename).toBe("./.mcp-handles/tasks.db")
      expect(fs.existsSync(path.join(dir, ".mcp-handles"))).toBe(false)
      expect(yield* opened(SqliteStore.layer())).toBe("opened")
      expect(fs.statSync(path.join(dir, ".mcp-handles")).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(dir, ".mcp-handles", "tasks.db")).mode & 0o777).toBe(0o600)
      // A second open finds both and keeps them.
      expect(yield* opened(SqliteStore.layer({}))).toBe("opened")
    }),
  )

  it.effect("keeps refusing an explicit path whose directory is missing", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(opened(SqliteStore.layer({ filename: "./nowhere/tasks.db" })))
      expect(error.reason).toBe("cannot-create")
      expect(error.message).toContain("does not exist")
      expect(fs.existsSync(path.join(dir, "nowhere"))).toBe(false)
    }),
  )

  it.effect("says so when the default directory cannot be created", () =>
    Effect.gen(function* () {
      fs.writeFileSync(path.join(dir, ".mcp-handles"), "a file where the directory should be")
      const error = yield* Effect.flip(opened(SqliteStore.layer()))
      expect(error.reason).toBe("cannot-create")
      expect(error.message).toContain(".mcp-handles")
    }),
  )
})
