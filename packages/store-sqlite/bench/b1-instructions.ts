/**
 * B1's encrypted side counted in instructions rather than time, for a machine too loaded for
 * the timed ratio to settle: one side per process, `CALLS` calls of B1's loop (begin + update
 * with a task id) on a fresh file. Run each side under callgrind twice, with 0 calls and with N;
 * the difference over N is that side's instructions per call (start-up cancels out):
 *
 * ```
 * valgrind --tool=callgrind --callgrind-out-file=/dev/null node bench/dist/b1-instructions.js plain 200
 * ```
 *
 * With `group` after the count, B2's group-committed side is counted the same way. `encrypted`
 * runs on `node:crypto` (`NodeCipher`, what the client and the CLI use); `encrypted-webcrypto` on
 * core's default WebCrypto cipher.
 *
 * Instructions leave out what B1's wall time is mostly made of (waiting for fsync), so the
 * encrypted/plain ratio here is an upper bound of the timed one.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Cipher from "@mcp-handles/core/Cipher"
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as Encryption from "@mcp-handles/core/Encryption"
import { NodeCipher } from "@mcp-handles/platform-node"
import { SqliteStore } from "@mcp-handles/store-sqlite"
import * as Effect from "effect/Effect"
import { storeCall } from "./call.js"

// `group` (a third argument) starts every call at once, as B2 does, so their writes share commits.
const [side = "plain", count = "0", mode = "sequential"] = process.argv.slice(2)
const calls = Number(count)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-handles-b1i-"))
const program = Effect.scoped(
  Effect.gen(function* () {
    const plain = yield* SqliteStore.make({ filename: path.join(dir, "b1.db") })
    // Both sides derive the key, so that only the calls differ between them.
    const encryption = yield* Encryption.make(
      { current: "bench", keys: new Map([["bench", new Uint8Array(32).fill(7)]]) },
      side === "encrypted-webcrypto" ? Cipher.webCrypto : NodeCipher.cipher,
    )
    const store = side.startsWith("encrypted") ? EncryptedStore.make(plain, encryption) : plain
    yield* Effect.forEach(Array.from({ length: calls }), () => storeCall(store), {
      concurrency: mode === "group" ? "unbounded" : 1,
      discard: true,
    })
  }),
)

Effect.runPromise(program).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
