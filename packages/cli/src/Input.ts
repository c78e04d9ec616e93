/**
 * Answers to the server's input requests (`input_required`): a fixed answer from `--answer`, or
 * a prompt on a terminal. Without either, the request stays unanswered; the call waits and the
 * status line says so (a later `resume --answer ...` can answer it).
 */
import { createInterface } from "node:readline/promises"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CliError, usage } from "./CliError.js"

export const parseAnswer = (raw: Option.Option<string>): Effect.Effect<Option.Option<unknown>, CliError> =>
  Option.match(raw, {
    onNone: () => Effect.succeed(Option.none()),
    onSome: (text) =>
      Effect.try({
        try: () => Option.some(JSON.parse(text) as unknown),
        catch: () => usage(`--answer: not JSON: ${text}`),
      }),
  })

const summary = (request: TaskClient.InputRequest): string => {
  const r = request.request as { method?: unknown; params?: { message?: unknown } } | null
  const message = typeof r?.params?.message === "string" ? r.params.message : JSON.stringify(request.request)
  return `${request.key}: the server asks (${String(r?.method ?? "input")}, ${request.inputKey}): ${message}`
}

export const handler = (answer: Option.Option<unknown>): TaskClient.InputHandler | undefined => {
  if (Option.isSome(answer)) {
    const value = answer.value
    return (request) =>
      Effect.sync(() => {
        process.stderr.write(`\n${summary(request)}\n  answered with --answer\n`)
        return value as never
      })
  }
  if (process.stdin.isTTY !== true) return undefined
  return (request) =>
    Effect.tryPromise(async () => {
      const rl = createInterface({ input: process.stdin, output: process.stderr })
      try {
        for (;;) {
          const line = await rl.question(
            `\n${summary(request)}\n  answer as JSON (e.g. {"action":"accept","content":{...}}): `,
          )
          try {
            return JSON.parse(line) as never
          } catch {
            process.stderr.write("  not JSON; try again\n")
          }
        }
      } finally {
        rl.close()
      }
    })
}
