/**
 * `mcp-handles resume`: after a crash, a deploy, or a detached call, reconcile every open call
 * in the store and follow each until it settles or is in doubt.
 *
 * @since 0.1.0
 */
import * as HandleRecord from "@mcp-handles/core/HandleRecord"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Auth from "../Auth.js"
import { exitCodes, fromKnown } from "../CliError.js"
import * as Common from "../Common.js"
import * as Follow from "../Follow.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Render from "../Render.js"
import * as Row from "../Row.js"
import * as Screen from "../Screen.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Spec from "../Spec.js"
import * as Troubleshooting from "../Troubleshooting.js"

const onlyServer = Spec.optional(
  Spec.text("only-server", {
    placeholder: "NAME",
    description:
      "follow only the open calls of this server (its name, as list shows it); needed with --header when open calls span several servers",
    example: "--only-server research",
  }),
)

/**
 * The exit status of a resume: 3 while any call needs someone (in doubt, waiting for input,
 * skipped for an unknown server), else 1 if a followed call ended badly, else 0.
 *
 * @since 0.2.0
 */
export const exitCode = (report: Output.Resume): number => {
  const waiting = report.calls.some((c) => c.outcome === "WaitingForInput" || c.outcome === "InDoubt")
  if (waiting || report.inDoubt.length > 0 || report.skipped.length > 0) return exitCodes.attention
  const bad = report.calls.some(
    (c) =>
      c.outcome !== "Completed" ||
      (typeof c.result === "object" && c.result !== null && c.result.isError === true),
  )
  return bad ? exitCodes.failed : exitCodes.ok
}

/**
 * @since 0.1.0
 * @category commands
 */
export const spec = Spec.command(
  "resume",
  {
    summary: "Reconcile every open call and follow each until it settles or is in doubt",
    description: [
      "After a crash, a deploy or a detached call: reconciles every open call (live tasks are polled again, calls that were in flight when their process died become in_doubt, pending cancels are finished) and follows each until it settles or is in doubt, with progress on stderr and a summary on stdout.",
      "Open calls whose server is not in this store's server list are skipped and named; --server NAME=URL adds it. Input requests are answered with --answer KEY=JSON, or by a prompt on a terminal.",
    ],
    examples: [
      { command: "mcp-handles resume" },
      {
        command: `mcp-handles resume --answer 'confirm={"action":"accept","content":{"confirm":true}}'`,
      },
      {
        command: "mcp-handles resume --only-server research --header-env 'Authorization=RESEARCH_TOKEN'",
      },
    ],
    exitCodes: [
      [0, "every open call completed"],
      [1, "a call ended failed, cancelled, expired or with isError"],
      [3, "a call is in doubt, waits for input nobody here can give, or was skipped (unknown server)"],
    ],
  },
  {
    ...Common.common,
    servers: Common.servers,
    ...Auth.options,
    onlyServer,
    answer: Input.answer,
    push: Common.push,
    json: Common.json,
    reveal: Common.reveal,
  },
  (options) =>
    Effect.gen(function* () {
      const answers = yield* Input.parseAnswers(options.answer)
      const headers = yield* Auth.fromOptions(options)
      const input = Input.make(answers)
      const session = yield* Common.open(options, {
        addServers: options.servers,
        input,
        headers,
        drives: true,
        push: options.push,
      })
      const say = (text: string) => {
        if (!options.json) Screen.status.print(text)
      }
      // By identity, else by name: rows an application wrote are resumed at its server's URL now.
      const known = (r: HandleRecord.HandleRecord) =>
        ServerRegistry.serverOf(r.serverId, session.servers) !== undefined
      const nameOf = (r: HandleRecord.HandleRecord) => ServerRegistry.displayName(r.serverId, session.servers)
      const chosen = (r: HandleRecord.HandleRecord) =>
        Option.match(options.onlyServer, { onNone: () => true, onSome: (name) => nameOf(r) === name })
      // Before reconciling, which may already send (a pending cancel): decide where headers go.
      const openBefore = yield* Common.listAll(session, { statuses: HandleRecord.openStatuses }).pipe(
        Effect.mapError(fromKnown),
      )
      const targets = openBefore.filter((r) => known(r) && chosen(r)).map((r) => r.serverId)
      yield* Common.oneServerForHeaders(session, headers, targets)
      session.authorize(targets)
      const report = yield* session.client.reconcile.pipe(Effect.mapError(fromKnown))
      say(
        `reconciled: ${report.resumed} task(s) resumed, ${report.inDoubt} interrupted call(s) now in doubt${report.reissued > 0 ? `, ${report.reissued} re-issued` : ""}`,
      )
      const open = yield* Common.listAll(session, { statuses: HandleRecord.openStatuses }).pipe(
        Effect.mapError(fromKnown),
      )
      const reachable = open.filter((r) => known(r) && chosen(r))
      const skipped = open.filter((r) => !known(r) && chosen(r))
      for (const r of skipped) {
        say(
          `${r.key}: skipped; the store knows no URL for its server ${nameOf(r)} (add it: mcp-handles servers --set ${nameOf(r)}=URL, or pass --server ${nameOf(r)}=URL)`,
        )
      }
      const started = Date.now()
      let settled = 0
      const results: Array<{ readonly key: string; readonly followed: Follow.Followed }> = []
      const progress = () => {
        if (options.json || reachable.length === 0) return
        Screen.status.show(
          `following ${reachable.length} open call(s): ${settled} settled, ${reachable.length - settled} open${Screen.liveStderr() ? ` · ${Render.elapsed(Date.now() - started)}` : ""}`,
        )
      }
      yield* Effect.forEach(
        reachable,
        (r) =>
          Follow.settle(session, r.key, input).pipe(
            Effect.mapError(fromKnown),
            Effect.tap((followed) =>
              Effect.sync(() => {
                settled++
                results.push({ key: r.key, followed })
                say(Follow.line(followed))
                progress()
              }),
            ),
          ),
        { concurrency: "unbounded", discard: true },
      ).pipe(
        Effect.raceFirst(
          Effect.sync(progress).pipe(Effect.zipRight(Effect.sleep("250 millis")), Effect.forever),
        ),
        Effect.ensuring(Effect.sync(Screen.status.clear)),
      )
      const context = session.rowContext(options.reveal)
      const rowOf = (key: string) =>
        session.client.get(key).pipe(
          Effect.mapError(fromKnown),
          Effect.map((record) => Row.make(record, context)),
        )
      const calls = yield* Effect.forEach(results, (r) =>
        Effect.map(rowOf(r.key), (row) => Follow.toOutput(row, r.followed)),
      )
      const inDoubt = yield* Common.listAll(session, { statuses: ["in_doubt"] }).pipe(
        Effect.mapError(fromKnown),
      )
      const out: Output.Resume = {
        reconciled: report,
        calls,
        inDoubt: inDoubt.map((r) => Row.make(r, context)),
        skipped: skipped.map((r) => Row.make(r, context)),
      }
      if (options.json) Output.json(Output.Resume, out)
      else {
        const counts = new Map<string, number>()
        for (const r of results) {
          const label =
            r.followed._tag === "WaitingForInput" ? "waiting for input" : r.followed._tag.toLowerCase()
          counts.set(label, (counts.get(label) ?? 0) + 1)
        }
        const summary = [...counts].map(([label, n]) => `${n} ${label}`).join(", ")
        const lines = [`resumed ${reachable.length} open call(s)${summary === "" ? "" : `: ${summary}`}`]
        if (skipped.length > 0) {
          lines.push(
            `${skipped.length} call(s) skipped, their server unknown here: ${skipped.map((r) => r.key).join(", ")}`,
          )
        }
        if (inDoubt.length > 0) {
          lines.push(
            `${inDoubt.length} call(s) in doubt (they may or may not have launched): ${inDoubt.map((r) => r.key).join(", ")}`,
            `decide each with \`mcp-handles reissue KEY\` (send it again) or \`mcp-handles abandon KEY\` (see ${Troubleshooting.inDoubt})`,
          )
        }
        Output.line(lines.join("\n"))
      }
      yield* Common.exitWith(exitCode(out))
    }).pipe(Effect.scoped),
)
