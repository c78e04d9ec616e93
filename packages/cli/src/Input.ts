/**
 * Answers to the server's input requests (`input_required`): given on the command line per
 * request key (`--answer KEY=JSON`), or asked on the terminal, one prompt per request, built from
 * the request itself (an elicitation form's fields become form fields). A request nobody here
 * can answer is left open: the command stops following that call and says so (exit 3), and a
 * later `resume --answer KEY=JSON` (or `resume` on a terminal) answers it.
 *
 * @since 0.1.0
 */
import { createInterface, type Interface } from "node:readline/promises"
import type { JsonObject, JsonValue } from "@mcp-handles/core/Json"
import * as ServerRequest from "@mcp-handles/core/ServerRequest"
import type * as TaskClient from "@mcp-handles/core/TaskClient"
import * as Effect from "effect/Effect"
import { type CliError, usage } from "./CliError.js"
import * as Screen from "./Screen.js"
import * as Spec from "./Spec.js"

/**
 * @since 0.2.0
 * @category options
 */
export const answer = Spec.repeated(
  Spec.text("answer", {
    placeholder: "[KEY=]JSON",
    description:
      'the response to the input request KEY (e.g. an elicitation\'s {"action":"accept","content":{...}}); without KEY=, to every request no other --answer names',
    example: `--answer 'confirm={"action":"accept","content":{"confirm":true}}'`,
  }),
)

/**
 * Answers given on the command line.
 *
 * @since 0.2.0
 * @category models
 */
export interface Answers {
  readonly byKey: ReadonlyMap<string, JsonValue>
  /** For every request no keyed answer names. */
  readonly fallback: JsonValue | undefined
}

const keyed = /^([^\s={}[\]"]+)=(.*)$/s

const parseJson = (text: string, what: string): Effect.Effect<JsonValue, CliError> =>
  Effect.try({
    try: () => JSON.parse(text) as JsonValue,
    catch: (error) => usage(`${what}: not JSON (${(error as Error).message})`),
  })

/**
 * `KEY=JSON` or `JSON`, each at most once.
 *
 * @since 0.2.0
 * @category constructors
 */
export const parseAnswers = (raw: ReadonlyArray<string>): Effect.Effect<Answers, CliError> =>
  Effect.gen(function* () {
    const byKey = new Map<string, JsonValue>()
    let fallback: JsonValue | undefined
    for (const text of raw) {
      const match = keyed.exec(text)
      if (match !== null) {
        const key = match[1] ?? ""
        if (byKey.has(key)) return yield* usage(`--answer: two answers for ${key}`)
        byKey.set(key, yield* parseJson(match[2] ?? "", `--answer ${key}`))
      } else {
        if (fallback !== undefined) return yield* usage("--answer: two answers without a KEY=")
        fallback = yield* parseJson(text, "--answer")
      }
    }
    return { byKey, fallback }
  })

/**
 * How this process answers input.
 *
 * @since 0.2.0
 * @category models
 */
export interface Input {
  /** Undefined when it can answer nothing: the client then never asks. */
  readonly handler: TaskClient.InputHandler | undefined
  /** Whether the request with this key gets an answer here (given, or asked on a terminal). */
  readonly canAnswer: (inputKey: string) => boolean
}

/** A prompt needs a person at both ends: keys in, questions out. */
const interactive = (): boolean => process.stdin.isTTY === true && process.stderr.isTTY === true

const methodOf = (request: ServerRequest.ServerRequest): string =>
  request.method === "unknown" ? "input" : request.method

/**
 * The line that says what was asked, e.g. `a1: the server asks (elicitation/create, ok): OK?`.
 *
 * @since 0.2.0
 */
export const summary = (request: TaskClient.InputRequest): string =>
  `${request.key}: the server asks (${methodOf(request.request)}, ${request.inputKey}): ${ServerRequest.message(request.request)}`

/** A value of the field's type that meets its constraints: its default, its first choice, else one made up. */
const exampleValue = (field: ServerRequest.Field): JsonValue => {
  if (field.default !== undefined) return field.default
  const allowed = ServerRequest.choices(field)
  const first = allowed?.[0]?.value
  if (field.type === "array") {
    const item = first ?? "text"
    return Array.from({ length: Math.max(1, field.minItems ?? 1) }, () => item)
  }
  if (first !== undefined) return first
  switch (field.type) {
    case "boolean":
      return true
    case "number":
    case "integer":
      return field.minimum ?? (field.maximum !== undefined && field.maximum < 1 ? field.maximum : 1)
    case "string": {
      const formatted: Readonly<Record<string, string>> = {
        email: "me@example.com",
        uri: "https://example.com/",
        date: "2026-07-28",
        "date-time": "2026-07-28T12:00:00Z",
      }
      return (
        (field.format === undefined ? undefined : formatted[field.format]) ??
        "text".padEnd(field.minLength ?? 0, "x")
      )
    }
    default:
      return "..."
  }
}

/**
 * An answer of the shape `request` expects, for people to copy and edit: an accepted elicitation
 * form with a value for each of its fields, a sampling message, a list of roots. Undefined for a
 * request this client cannot read (any JSON answers it).
 *
 * @since 0.2.0
 */
export const exampleAnswer = (request: ServerRequest.ServerRequest): JsonValue | undefined => {
  switch (request.method) {
    case "elicitation/create":
      return request.params.mode === "url"
        ? { action: "accept" }
        : {
            action: "accept",
            content: Object.fromEntries(
              Object.entries(request.params.requestedSchema.properties).map(([name, field]) => [
                name,
                exampleValue(field),
              ]),
            ),
          }
    case "sampling/createMessage":
      return { role: "assistant", content: { type: "text", text: "..." }, model: "my-model" }
    case "roots/list":
      return { roots: [{ uri: "file:///home/me/project" }] }
    case "unknown":
      return undefined
  }
}

/** `text` as one shell word. */
const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * The `--answer` that answers request `inputKey` with an answer of the shape it expects, e.g.
 * `--answer 'confirm={"action":"accept","content":{"confirm":true}}'`; `--answer KEY=JSON` when
 * the request is unknown or unreadable.
 *
 * @since 0.2.0
 */
export const answerFlag = (inputKey: string, request: ServerRequest.ServerRequest | undefined): string => {
  const example = request === undefined ? undefined : exampleAnswer(request)
  return example === undefined
    ? `--answer ${shellQuote(`${inputKey}=JSON`)}`
    : `--answer ${shellQuote(`${inputKey}=${JSON.stringify(example)}`)}`
}

/**
 * @since 0.2.0
 * @category constructors
 */
export const make = (answers: Answers): Input => {
  // Keys whose given answer does not fit the request: nobody here can answer them.
  const refused = new Set<string>()
  const canAnswer = (inputKey: string) =>
    !refused.has(inputKey) && (answers.byKey.has(inputKey) || answers.fallback !== undefined || interactive())
  if (answers.byKey.size === 0 && answers.fallback === undefined && !interactive()) {
    return { handler: undefined, canAnswer }
  }
  const handler: TaskClient.InputHandler = (request) => {
    const given = answers.byKey.get(request.inputKey) ?? answers.fallback
    if (given !== undefined) {
      // The client refuses an answer that does not fit; say why here, where it was given.
      const problems = ServerRequest.answerProblems(request.request, given)
      if (problems.length > 0) {
        return Effect.zipRight(
          Effect.sync(() => {
            refused.add(request.inputKey)
            Screen.status.print(
              `${summary(request)}\n  --answer for ${request.inputKey} does not fit the request: ${problems.join("; ")}\n  expected, e.g.: ${answerFlag(request.inputKey, request.request)}`,
            )
          }),
          Effect.never,
        )
      }
      return Effect.sync(() => {
        Screen.status.print(`${summary(request)}\n  answered with --answer`)
        return given
      })
    }
    // Unanswerable here: wait (the follower sees the open request and stops following).
    if (!interactive()) return Effect.never
    return Effect.tryPromise((signal) => ask(request, signal))
  }
  return { handler, canAnswer }
}

/** One prompt at a time: two calls may ask at once, and a person answers one question at a time. */
let queue: Promise<unknown> = Promise.resolve()

const ask = (request: TaskClient.InputRequest, signal: AbortSignal): Promise<JsonValue> => {
  const turn = queue.then(() =>
    Screen.status.paused(async () => {
      signal.throwIfAborted()
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
      // Ctrl-C at a prompt: readline has the keyboard in raw mode, so no signal is raised; raise
      // it, so the command detaches its calls as it does anywhere else.
      rl.on("SIGINT", () => {
        rl.close()
        process.kill(process.pid, "SIGINT")
      })
      try {
        return await prompt(rl, request, signal)
      } finally {
        rl.close()
      }
    }),
  )
  queue = turn.catch(() => undefined)
  return turn
}

/** What a person types to refuse instead of filling the form. */
const refusals: Readonly<Record<string, JsonValue>> = {
  ":decline": { action: "decline" },
  ":cancel": { action: "cancel" },
}

class Refused {
  constructor(readonly answer: JsonValue) {}
}

const write = (text: string) => process.stderr.write(text)

const prompt = async (
  rl: Interface,
  request: TaskClient.InputRequest,
  signal: AbortSignal,
): Promise<JsonValue> => {
  const question = async (text: string): Promise<string> => {
    const line = (await rl.question(text, { signal })).trim()
    const refusal = refusals[line]
    if (refusal !== undefined) throw new Refused(refusal)
    return line
  }
  const r = request.request
  write(`\n${Screen.bold("?", process.stderr)} ${summary(request)}\n`)
  try {
    if (r.method === "elicitation/create") {
      if (r.params.mode === "url") {
        write(`  open ${r.params.url}\n  (:decline or :cancel to refuse)\n`)
        await question("  press Enter once done: ")
        return { action: "accept" }
      }
      return { action: "accept", content: await form(r.params.requestedSchema, question) }
    }
    const example = exampleAnswer(r)
    write(
      example === undefined
        ? "  answer with the JSON response\n"
        : `  answer with the JSON response, e.g. ${JSON.stringify(example)}\n`,
    )
    for (;;) {
      const line = await question("  JSON: ")
      try {
        return JSON.parse(line) as JsonValue
      } catch {
        write("  not JSON; try again\n")
      }
    }
  } catch (error) {
    if (error instanceof Refused) return error.answer
    throw error
  }
}

const pick = (choices: ReadonlyArray<{ readonly value: string }>, text: string): string | undefined => {
  const n = Number(text)
  if (Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1]?.value
  return choices.find((c) => c.value === text)?.value ?? text
}

/**
 * Asks for each field of an elicitation's `requestedSchema` (flat, primitive fields: strings,
 * numbers, booleans, choices and multi-choices, as the spec allows), checks each answer against
 * its field, and asks again until it fits. An empty answer keeps the default, or leaves an
 * optional field out.
 */
const form = async (
  schema: ServerRequest.ElicitationForm["params"]["requestedSchema"],
  question: (text: string) => Promise<string>,
): Promise<JsonObject> => {
  const required = new Set(schema.required ?? [])
  const content: Record<string, JsonValue> = {}
  write("  fill in each field (:decline or :cancel to refuse)\n")
  for (const [name, field] of Object.entries(schema.properties)) {
    const title = field.title ?? name
    if (field.description !== undefined) write(`  ${Screen.dim(field.description, process.stderr)}\n`)
    const choices = ServerRequest.choices(field)
    if (choices !== undefined) {
      write(
        choices
          .map((c, i) => `    ${i + 1}) ${c.value === c.title ? c.title : `${c.title} (${c.value})`}\n`)
          .join(""),
      )
    }
    const kind =
      field.type === "array"
        ? "one or more, separated by commas"
        : field.type === "boolean"
          ? "yes/no"
          : choices !== undefined
            ? "a number or a value"
            : String(field.type ?? "JSON")
    const hasDefault = field.default !== undefined
    const hint = [kind, required.has(name) ? "required" : "optional"]
    if (hasDefault) hint.push(`default ${JSON.stringify(field.default)}`)
    for (;;) {
      const text = await question(`  ${title} (${hint.join(", ")}): `)
      if (text === "") {
        if (hasDefault) {
          content[name] = field.default ?? null
          break
        }
        if (!required.has(name)) break
        write("  required\n")
        continue
      }
      const parsed = parseField(field, choices, text)
      if (parsed.ok) {
        content[name] = parsed.value
        break
      }
      write(`  ${parsed.problem}\n`)
    }
  }
  return content
}

type Parsed =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: string }

/**
 * What a person typed, as the value of its field: read by the field's type (choices by number
 * or value), then checked by the client's own rule for answers (`ServerRequest.fieldProblem`),
 * the one the answer meets again before it is stored.
 */
const parseField = (
  field: ServerRequest.Field,
  choices: ReadonlyArray<{ readonly value: string }> | undefined,
  text: string,
): Parsed => {
  const read = (): JsonValue | undefined => {
    if (field.type === "array") {
      const parts = text
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part !== "")
      return choices === undefined ? parts : parts.map((part) => pick(choices, part) ?? part)
    }
    if (choices !== undefined) return pick(choices, text)
    switch (field.type) {
      case "boolean":
        return /^(y|yes|true)$/i.test(text) ? true : /^(n|no|false)$/i.test(text) ? false : undefined
      case "number":
      case "integer":
        return text.trim() === "" || !Number.isFinite(Number(text)) ? undefined : Number(text)
      case "string":
        return text
      default:
        try {
          return JSON.parse(text) as JsonValue
        } catch {
          return undefined
        }
    }
  }
  const value = read()
  if (value === undefined) {
    const expected =
      field.type === "boolean"
        ? "yes or no"
        : field.type === "number" || field.type === "integer"
          ? "not a number"
          : "not JSON"
    return { ok: false, problem: expected }
  }
  const problem = ServerRequest.fieldProblem(field, value)
  return problem === undefined ? { ok: true, value } : { ok: false, problem }
}
