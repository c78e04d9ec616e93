/**
 * `mcp-handles resume`: after a crash, a deploy, or a detached call, reconcile every open call
 * in the store and follow each until it settles or is in doubt.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Effect from "effect/Effect"
import { describe } from "../CliError.js"
import * as Common from "../Common.js"
import { type Followed, followedJson, followedLine, settle, statusLine } from "../Follow.js"
import * as Input from "../Input.js"
import * as Render from "../Render.js"
import * as ServerRegistry from "../ServerRegistry.js"

const answer = Options.text("answer").pipe(
  Options.withDescription("the JSON response to give to input requests (e.g. elicitation)"),
  Options.optional,
)

export const command = Command.make(
  "resume",
  { ...Common.common, servers: Common.servers, json: Common.json, reveal: Common.reveal, answer },
  (options) =>
    Effect.gen(function* () {
      const answerValue = yield* Input.parseAnswer(options.answer)
      const onInputRequired = Input.handler(answerValue)
      const session = yield* Common.open(options, {
        addServers: options.servers,
        ...(onInputRequired === undefined ? {} : { onInputRequired }),
      })
      const report = yield* session.client.reconcile.pipe(Effect.mapError(describe))
      const say = (text: string) => {
        if (!options.json) process.stderr.write(`${text}\n`)
      }
      say(
        `reconciled: ${report.resumed} task(s) resumed, ${report.inDoubt} interrupted call(s) now in doubt${report.reissued > 0 ? `, ${report.reissued} re-issued` : ""}`,
      )
      const open = yield* Common.listAll(session, {
        statuses: HandleRecord.openStatuses,
      }).pipe(Effect.mapError(describe))
      const known = (r: HandleRecord.HandleRecord) => session.servers.some((s) => s.id === r.serverId)
      const reachable = open.filter(known)
      for (const r of open.filter((r) => !known(r))) {
        say(
          `${r.key}: skipped; its server ${ServerRegistry.displayName(r.serverId, session.servers)} is not in ${session.registryFile} (pass --server URL)`,
        )
      }
      const started = Date.now()
      const line = options.json ? undefined : statusLine()
      let settled = 0
      const results: Array<{ key: string; outcome: Followed }> = []
      const progress = () =>
        line?.show(
          `following ${reachable.length} open call(s): ${settled} settled, ${reachable.length - settled} open${process.stderr.isTTY === true ? ` · ${Render.elapsed(Date.now() - started)}` : ""}`,
        )
      yield* Effect.forEach(
        reachable,
        (r) =>
          settle(session, r.key, onInputRequired !== undefined).pipe(
            Effect.mapError(describe),
            Effect.tap((outcome) =>
              Effect.sync(() => {
                settled++
                results.push({ key: r.key, outcome })
                line?.clear()
                say(followedLine(outcome))
                progress()
              }),
            ),
          ),
        { concurrency: "unbounded", discard: true },
      ).pipe(
        Effect.raceFirst(
          Effect.sync(progress).pipe(Effect.zipRight(Effect.sleep("250 millis")), Effect.forever),
        ),
        Effect.ensuring(Effect.sync(() => line?.clear())),
      )
      const inDoubt = yield* Common.listAll(session, { statuses: ["in_doubt"] }).pipe(
        Effect.mapError(describe),
      )
      if (options.json) {
        console.log(
          JSON.stringify({
            reconciled: report,
            settled: results.map((r) => followedJson(r.outcome)),
            inDoubt: inDoubt.map((r) => r.key),
            skipped: open.filter((r) => !known(r)).map((r) => r.key),
          }),
        )
      } else {
        const counts = new Map<string, number>()
        for (const r of results) {
          const label =
            r.outcome._tag === "WaitingForInput" ? "waiting for input" : r.outcome._tag.toLowerCase()
          counts.set(label, (counts.get(label) ?? 0) + 1)
        }
        const summary = [...counts].map(([label, n]) => `${n} ${label}`).join(", ")
        console.log(`resumed ${reachable.length} open call(s)${summary === "" ? "" : `: ${summary}`}`)
        if (inDoubt.length > 0) {
          console.log(
            `${inDoubt.length} call(s) in doubt (they may or may not have launched): ${inDoubt.map((r) => r.key).join(", ")}`,
          )
          console.log("decide each with `mcp-handles reissue KEY` or `mcp-handles abandon KEY`")
        }
      }
    }).pipe(Effect.scoped),
).pipe(Command.withDescription("Reconcile every open call and follow each until it settles or is in doubt"))
