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

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const messageOf = (request: JsonValue): string => {
  const params = isObject(request) && isObject(request.params) ? request.params : undefined
  return typeof params?.message === "string" ? params.message : JSON.stringify(request)
}

const methodOf = (request: JsonValue): string =>
  isObject(request) && typeof request.method === "string" ? request.method : "input"

/**
 * The line that says what was asked, e.g. `a1: the server asks (elicitation/create, ok): OK?`.
 *
 * @since 0.2.0
 */
export const summary = (request: TaskClient.InputRequest): string =>
  `${request.key}: the server asks (${methodOf(request.request)}, ${request.inputKey}): ${messageOf(request.request)}`

/**
 * @since 0.2.0
 * @category constructors
 */
export const make = (answers: Answers): Input => {
  const canAnswer = (inputKey: string) =>
    answers.byKey.has(inputKey) || answers.fallback !== undefined || interactive()
  if (answers.byKey.size === 0 && answers.fallback === undefined && !interactive()) {
    return { handler: undefined, canAnswer }
  }
  const handler: TaskClient.InputHandler = (request) => {
    const given = answers.byKey.get(request.inputKey) ?? answers.fallback
    if (given !== undefined) {
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
  const params = isObject(r) && isObject(r.params) ? r.params : undefined
  write(`\n${Screen.bold("?", process.stderr)} ${summary(request)}\n`)
  try {
    if (methodOf(r) === "elicitation/create" && params !== undefined) {
      if (params.mode === "url" && typeof params.url === "string") {
        write(`  open ${params.url}\n  (:decline or :cancel to refuse)\n`)
        await question("  press Enter once done: ")
        return { action: "accept" }
      }
      const schema = isObject(params.requestedSchema) ? params.requestedSchema : undefined
      if (schema !== undefined) return { action: "accept", content: await form(schema, question) }
    }
    write('  answer with the JSON response (e.g. {"action":"accept","content":{...}})\n')
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

/** A choice's value and how it is shown. */
interface Choice {
  readonly value: string
  readonly title: string
}

const choicesOf = (schema: JsonObject): ReadonlyArray<Choice> | undefined => {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : []
    return schema.enum.map((value, i) => ({
      value: String(value),
      title: typeof names[i] === "string" ? `${names[i]} (${String(value)})` : String(value),
    }))
  }
  const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : []
  const choices = options.filter(isObject).filter((o) => typeof o.const === "string")
  if (choices.length === 0) return undefined
  return choices.map((o) => ({
    value: String(o.const),
    title: typeof o.title === "string" ? `${o.title} (${String(o.const)})` : String(o.const),
  }))
}

const pick = (choices: ReadonlyArray<Choice>, text: string): string | undefined => {
  const n = Number(text)
  if (Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1]?.value
  return choices.find((c) => c.value === text)?.value
}

/**
 * Asks for each field of an elicitation's `requestedSchema` (flat, primitive fields: strings,
 * numbers, booleans, choices and multi-choices, as the spec allows), checks each answer against
 * its field, and asks again until it fits. An empty answer keeps the default, or leaves an
 * optional field out.
 */
const form = async (schema: JsonObject, question: (text: string) => Promise<string>): Promise<JsonObject> => {
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : [])
  const content: Record<string, JsonValue> = {}
  write("  fill in each field (:decline or :cancel to refuse)\n")
  for (const [name, raw] of Object.entries(properties)) {
    const field = isObject(raw) ? raw : {}
    const title = typeof field.title === "string" ? field.title : name
    if (typeof field.description === "string") write(`  ${Screen.dim(field.description, process.stderr)}\n`)
    const items = isObject(field.items) ? field.items : undefined
    const choices = field.type === "array" && items !== undefined ? choicesOf(items) : choicesOf(field)
    if (choices !== undefined) {
      write(choices.map((c, i) => `    ${i + 1}) ${c.title}\n`).join(""))
    }
    const kind =
      field.type === "array"
        ? "one or more, separated by commas"
        : field.type === "boolean"
          ? "yes/no"
          : choices !== undefined
            ? "a number or a value"
            : String(field.type ?? "JSON")
    const hasDefault = Object.hasOwn(field, "default")
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

const parseField = (field: JsonObject, choices: ReadonlyArray<Choice> | undefined, text: string): Parsed => {
  if (field.type === "array") {
    const values = text
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== "")
    if (choices === undefined) return { ok: true, value: values }
    const picked = values.map((part) => pick(choices, part))
    return picked.every((p): p is string => p !== undefined)
      ? { ok: true, value: picked }
      : { ok: false, problem: "not one of the choices" }
  }
  if (choices !== undefined) {
    const picked = pick(choices, text)
    return picked === undefined
      ? { ok: false, problem: "not one of the choices" }
      : { ok: true, value: picked }
  }
  switch (field.type) {
    case "boolean": {
      if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true }
      if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false }
      return { ok: false, problem: "yes or no" }
    }
    case "number":
    case "integer": {
      const n = Number(text)
      if (!Number.isFinite(n)) return { ok: false, problem: "not a number" }
      if (field.type === "integer" && !Number.isInteger(n))
        return { ok: false, problem: "not a whole number" }
      if (typeof field.minimum === "number" && n < field.minimum)
        return { ok: false, problem: `at least ${field.minimum}` }
      if (typeof field.maximum === "number" && n > field.maximum)
        return { ok: false, problem: `at most ${field.maximum}` }
      return { ok: true, value: n }
    }
    case "string": {
      if (typeof field.minLength === "number" && text.length < field.minLength)
        return { ok: false, problem: `at least ${field.minLength} characters` }
      if (typeof field.maxLength === "number" && text.length > field.maxLength)
        return { ok: false, problem: `at most ${field.maxLength} characters` }
      return { ok: true, value: text }
    }
    default:
      try {
        return { ok: true, value: JSON.parse(text) as JsonValue }
      } catch {
        return { ok: false, problem: "not JSON" }
      }
  }
}
