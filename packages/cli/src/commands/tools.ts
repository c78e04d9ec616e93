/**
 * `mcp-handles tools <server>`: what a server offers, asked over the same wire the client calls
 * it with (`tools/list`, every page): each tool's name, whether it runs as a task, its arguments
 * and what it does. Nothing is written; a server named rather than given by URL is looked up in
 * the store.
 *
 * @since 0.4.0
 */
import * as HttpWire from "@mcp-handles/core/HttpWire"
import type { JsonObject } from "@mcp-handles/core/Json"
import type * as Wire from "@mcp-handles/core/Wire"
import * as Effect from "effect/Effect"
import * as Auth from "../Auth.js"
import { type CliError, usage } from "../CliError.js"
import * as Common from "../Common.js"
import * as Output from "../Output.js"
import * as Render from "../Render.js"
import * as ServerRegistry from "../ServerRegistry.js"
import * as Spec from "../Spec.js"
import { preflight, wireFailure } from "./call.js"

const server = Spec.arg("server", {
  description:
    "the server's URL (or NAME=URL), or the name of a server the store knows (mcp-handles servers lists them)",
  example: "http://127.0.0.1:3000/mcp",
})

/** A URL is asked directly; a bare name is one the store has a URL for. */
const endpointOf = (
  given: string,
  options: Common.CommonOptions,
): Effect.Effect<ServerRegistry.Endpoint, CliError> =>
  given.includes("://")
    ? ServerRegistry.endpointFor(given)
    : Effect.scoped(
        Effect.flatMap(Common.open(options), (session) => {
          const known = session.servers.find((candidate) => candidate.name === given)
          return known === undefined
            ? Effect.fail(
                usage(
                  `the store knows no server ${given} (${session.servers.map((s) => s.name).join(", ") || "it knows none"}); pass its URL, or add it with mcp-handles servers --set ${given}=URL`,
                ),
              )
            : Effect.succeed({ id: known.id, name: known.name, url: known.url })
        }),
      )

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const typeOf = (schema: unknown): string => {
  if (!isObject(schema)) return "any"
  const s = schema
  if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value)).join(" | ")
  if (typeof s.type === "string") return s.type === "array" ? `${typeOf(s.items)}[]` : s.type
  if (Array.isArray(s.type)) return s.type.join(" | ")
  if (typeof s.$ref === "string") return s.$ref.replace(/^.*\//, "")
  return "any"
}

/**
 * The arguments a schema takes, on one line: `seconds?: number, label?: string` (`?` when not
 * required). What does not fit that (no `properties`) is left to `--json`.
 *
 * @since 0.4.0
 * @category rendering
 */
export const argumentsLine = (inputSchema: JsonObject | undefined): string => {
  const properties = inputSchema?.properties
  if (!isObject(properties)) return "-"
  const required = Array.isArray(inputSchema?.required) ? inputSchema.required : []
  const names = Object.keys(properties)
  if (names.length === 0) return "-"
  return names
    .map((name) => `${name}${required.includes(name) ? "" : "?"}: ${typeOf(properties[name])}`)
    .join(", ")
}

/** No `execution.taskSupport` means the tool never runs as a task. */
const taskSupportOf = (tool: Wire.ToolInfo): string => tool.taskSupport ?? "forbidden"

/**
 * @since 0.4.0
 * @category commands
 */
export const spec = Spec.command(
  "tools",
  {
    summary: "List a server's tools: task support, arguments, what each does",
    description: [
      "Asks the server who it is (server/discover), then for its tools (tools/list, every page), over the same wire call uses. TASKS is the tool's task support: required (it always runs as a task), optional (as a task when the client declares the Tasks extension, as mcp-handles does) or forbidden (answered directly). ARGUMENTS sums up its input schema (? marks an optional argument); --json prints each schema whole.",
      "SERVER is a URL, or the name of a server the store knows. Nothing is written to the store.",
    ],
    examples: [
      { command: "mcp-handles tools http://127.0.0.1:3000/mcp" },
      { command: "mcp-handles tools research --json", note: "a server the store knows, schemas whole" },
    ],
    exitCodes: [[1, "the server could not be reached, or did not answer tools/list"]],
  },
  { ...Common.common, json: Common.json, ...Auth.options, server },
  (options) =>
    Effect.gen(function* () {
      const headers = yield* Auth.fromOptions(options)
      const found = yield* endpointOf(options.server, options)
      const endpoint: Wire.ServerEndpoint = { name: found.name, url: found.url, headers: () => headers }
      const wire = yield* HttpWire.make()
      yield* preflight(wire, endpoint)
      const tools = yield* wire.listTools(endpoint).pipe(Effect.mapError(wireFailure(endpoint, "tools/list")))
      if (options.json) {
        Output.json(Output.Tools, {
          server: found.name,
          url: found.url,
          tools: tools.map((tool) => ({
            name: tool.name,
            title: tool.title ?? null,
            description: tool.description ?? null,
            taskSupport: tool.taskSupport ?? null,
            idempotent: tool.idempotentHint,
            inputSchema: tool.inputSchema ?? null,
          })),
        })
        return
      }
      if (tools.length === 0) {
        Output.line(`${found.name} offers no tools`)
        return
      }
      Output.line(
        Render.table(
          ["NAME", "TASKS", "ARGUMENTS", "DESCRIPTION"],
          tools.map((tool) => [
            tool.name,
            taskSupportOf(tool),
            argumentsLine(tool.inputSchema),
            tool.description ?? tool.title ?? "",
          ]),
        ),
      )
    }),
)
