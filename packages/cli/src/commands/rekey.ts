/**
 * `mcp-handles rekey --key-env MCP_HANDLES_KEY`: re-seal every call under the newest key
 * (issue 32, item 2), online and resumable.
 *
 * @since 0.5.0
 */
import * as EncryptedStore from "@mcp-handles/core/EncryptedStore"
import * as HandleStore from "@mcp-handles/core/HandleStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { fromKnown, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Spec from "../Spec.js"
import * as StoreSpec from "../StoreSpec.js"

const batch = Spec.withDefault(
  Spec.integer("batch", {
    placeholder: "ROWS",
    description: "rows read and re-sealed per batch",
    example: "--batch 500",
    minimum: 1,
  }),
  100,
  "100",
)
const from = Spec.optional(
  Spec.text("from", {
    placeholder: "CURSOR",
    description:
      "resume where an interrupted run printed it was (running again from the start is harmless too)",
    example: "--from 1733130000000.k-17",
  }),
)

/**
 * @since 0.5.0
 * @category commands
 */
export const spec = Spec.command(
  "rekey",
  {
    summary: "Re-encrypt every call under the newest key (key rotation)",
    description: [
      "Re-seals every call in the store (every scope) that is not yet under the newest key: rows written under an older key, and rows written before encryption was on. Give every key still in use, newest first, with --key-env NAME or --key-file PATH; the key is never taken on the command line.",
      "Runs beside live applications: each row is written by compare-and-set, and one that changed meanwhile is read again. It works in batches and prints a cursor after each; an interrupted run resumes with --from, or from the start. When it reports nothing left, older keys can be retired.",
    ],
    examples: [
      { command: "mcp-handles rekey --key-env MCP_HANDLES_KEY" },
      { command: "mcp-handles rekey --key-file /run/secrets/mcp-handles-key --batch 500 --json" },
    ],
  },
  { ...Common.common, batch, from, json: Common.json },
  (options) =>
    Effect.gen(function* () {
      const keys = yield* Common.encryption(options)
      if (Option.isNone(keys)) {
        return yield* Effect.fail(usage("rekey needs the keys: --key-env NAME or --key-file PATH"))
      }
      const spec = yield* StoreSpec.parse(options.store)
      const opened = yield* Layer.build(StoreSpec.layer(spec, "read"))
      const store = Context.get(opened, HandleStore.HandleStore)
      const report = yield* EncryptedStore.rekey(store, keys.value, {
        batchSize: options.batch,
        from: Option.getOrUndefined(options.from),
        onBatch: (progress) =>
          Effect.sync(() => {
            if (options.json)
              Output.json(Output.Rekey, { ...progress, keyId: keys.value.currentKeyId, done: false })
            else
              Output.line(
                `read ${progress.examined}, re-sealed ${progress.rekeyed}${progress.cursor === null ? "" : `; resume with --from ${progress.cursor}`}`,
              )
          }),
      }).pipe(Effect.mapError(fromKnown))
      if (options.json) Output.json(Output.Rekey, { ...report, keyId: keys.value.currentKeyId, done: true })
      else
        Output.line(
          `done: every call is under key ${keys.value.currentKeyId}${report.skipped > 0 ? `, but ${report.skipped} changed under every attempt; run rekey again` : ""}`,
        )
    }).pipe(Effect.scoped),
)
