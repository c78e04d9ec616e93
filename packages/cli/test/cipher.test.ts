import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import * as Common from "../src/Common.js"
import { workspace } from "./support.js"

const key = `k1:${Buffer.alloc(32, 1).toString("base64")}`

// The CLI seals and opens rows as often as a live client does (`rekey` rewrites every row): it
// runs the keys on node:crypto, not on WebCrypto's thread-pool round trip per value.
describe("the CLI's keys", () => {
  it("run on node:crypto, from --key-env and from --key-file", async () => {
    const fromEnv = await Effect.runPromise(
      Common.encryption({ keyEnv: Option.some("MH_CLI_KEY"), keyFile: Option.none() }).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MH_CLI_KEY", key]]))),
      ),
    )
    expect(Option.map(fromEnv, (encryption) => encryption.cipher)).toEqual(Option.some("node:crypto"))
    const dir = workspace()
    try {
      const file = join(dir.dir, "keys")
      writeFileSync(file, key, { mode: 0o600 })
      const fromFile = await Effect.runPromise(
        Common.encryption({ keyEnv: Option.none(), keyFile: Option.some(file) }),
      )
      expect(Option.map(fromFile, (encryption) => encryption.cipher)).toEqual(Option.some("node:crypto"))
    } finally {
      dir.dispose()
    }
  })
})
