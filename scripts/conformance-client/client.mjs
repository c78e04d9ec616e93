#!/usr/bin/env node
// The client under test of the official conformance suite's client scenarios
// (scripts/conformance-client.sh). Built only on the public API of the built packages: the
// Promise client (`openTaskClient`) on the memory store for every `tools/call`, and `HttpWire`
// for `tools/list`, which the Promise client does not offer.
//
// The suite runs it as `<command> <server-url>` with MCP_CONFORMANCE_SCENARIO naming the
// scenario, MCP_CONFORMANCE_PROTOCOL_VERSION the version asked for and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT holding the tool calls to make. Exits non-zero when the scenario's
// flow did not go as a conforming client's would.
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const root = resolve(import.meta.dirname, "../..")
const core = await import(pathToFileURL(join(root, "packages/core/dist/index.js")).href)
const { MemoryStore } = await import(pathToFileURL(join(root, "packages/store-memory/dist/index.js")).href)

/** `effect/Effect` as core itself imports it (ESM, the same module instance), to run the wire. */
const importFromCore = async (specifier) => {
  const [name, ...rest] = specifier.split("/")
  const dir = join(root, "packages/core/node_modules", name)
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  const entry = manifest.exports[`./${rest.join("/")}`]
  return import(pathToFileURL(join(dir, typeof entry === "string" ? entry : entry.import)).href)
}
const Effect = await importFromCore("effect/Effect")

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? core.Wire.protocolVersion
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")
if (url === undefined) {
  console.error("usage: client.mjs <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)")
  process.exit(2)
}

const server = { name: "conformance", url }
const http = {
  protocolVersions: [version],
  clientInfo: { name: "mcp-handles-conformance", version: "0.0.0" },
}
const log = (...parts) => console.log(`[${scenario}]`, ...parts)

const wire = await Effect.runPromise(core.HttpWire.make(http))
const listTools = () => Effect.runPromise(wire.listTools(server))

/** Opens a client, runs `body` with it, and always closes it. */
const withClient = async (body, options = {}) => {
  const client = await core.openTaskClient({
    store: MemoryStore.layer,
    servers: [server],
    http,
    background: false,
    ...options,
  })
  try {
    return await body(client)
  } finally {
    await client.close()
  }
}

/** One durable call to its outcome; a call that did not complete is an error. */
const call = async (client, tool, args, options) => {
  const handle = await client.callTool(server.name, tool, args, options)
  const outcome = await handle.outcome()
  log(`${tool}: ${outcome._tag}`)
  if (outcome._tag !== "Completed")
    throw new Error(`${tool} ended ${outcome._tag}: ${JSON.stringify(outcome)}`)
  return outcome.result
}

/** Dummy arguments that satisfy a tool's input schema (strings, numbers, booleans). */
const sampleArguments = (inputSchema) => {
  const properties = inputSchema?.properties ?? {}
  const sample = { string: "us-west1", number: 1, integer: 1, boolean: true }
  return Object.fromEntries(
    Object.entries(properties)
      .filter(([, schema]) => schema?.type in sample)
      .map(([name, schema]) => [name, sample[schema.type]]),
  )
}

const accept = { action: "accept", content: { confirmed: true } }

const scenarios = {
  // Lists the tools and adds two numbers with the first.
  tools_call: async () => {
    const [tool] = await listTools()
    if (tool === undefined) throw new Error("no tool listed")
    await withClient((client) => call(client, tool.name, { a: 2, b: 3 }))
  },

  // Discovery, then a durable call from a client that answers input (so it declares elicitation):
  // the server checks each request's _meta and version header, and refuses the first with -32022
  // to see the client retry.
  "request-metadata": async () => {
    const answering = { ...http, clientCapabilities: { elicitation: {} } }
    const wireAnswering = await Effect.runPromise(core.HttpWire.make(answering))
    await Effect.runPromise(wireAnswering.discover(server))
    await withClient((client) => call(client, "echo", {}), { onInputRequired: async () => accept })
  },

  // Every listed tool called once: Mcp-Method and Mcp-Name on each request.
  "http-standard-headers": async () => {
    const tools = await listTools()
    await withClient(async (client) => {
      for (const tool of tools) await call(client, tool.name, sampleArguments(tool.inputSchema))
    })
  },

  // The calls the scenario hands over: Mcp-Param-* headers mirrored from the arguments.
  "http-custom-headers": async () => {
    const calls = context.toolCalls ?? []
    if (calls.length === 0) throw new Error("the scenario named no tool calls")
    await withClient(async (client) => {
      for (const { name, arguments: args } of calls) await call(client, name, args)
    })
  },

  // Every listed tool tried: the valid one completes, each invalid definition is refused with
  // InvalidToolDefinition before anything is written (its row must not exist).
  "http-invalid-tool-headers": async () => {
    const tools = await listTools()
    await withClient(async (client) => {
      const unexpected = []
      for (const tool of tools) {
        const args = sampleArguments(tool.inputSchema)
        const shouldRefuse = tool.name.startsWith("invalid_")
        try {
          const handle = await client.callTool(server.name, tool.name, args, { key: tool.name })
          const outcome = await handle.outcome()
          log(`${tool.name}: ${outcome._tag}`)
          if (shouldRefuse || outcome._tag !== "Completed")
            unexpected.push(`${tool.name} ran (${outcome._tag})`)
        } catch (error) {
          log(`${tool.name}: refused (${error?._tag}: ${error?.message})`)
          if (!shouldRefuse || error?._tag !== "InvalidToolDefinition") {
            unexpected.push(`${tool.name}: ${error?._tag ?? error}`)
            continue
          }
          const row = await client.get(tool.name).then(
            () => "written",
            (getError) => getError?._tag,
          )
          if (row !== "UnknownKey") unexpected.push(`${tool.name} was refused but its row is ${row}`)
        }
      }
      if (unexpected.length > 0) throw new Error(unexpected.join("; "))
    })
  },

  // Multi round-trip (SEP-2322): the input is answered through the client's handler, which
  // first makes an unrelated call (it must carry none of the other call's state); requestState is
  // echoed back as received, and none is sent where the server gave none.
  "sep-2322-client-request-state": async () => {
    await listTools()
    await withClient(
      async (client) => {
        await call(client, "test_mrtr_echo_state", {}, { key: "echo-state" })
        await call(client, "test_mrtr_no_state", {}, { key: "no-state" })
        await call(client, "test_mrtr_no_result_type", {}, { key: "no-result-type" })
      },
      {
        onInputRequired: async (request) => {
          log(`input requested for ${request.tool} (${request.inputKey})`)
          if (request.tool === "test_mrtr_echo_state") {
            await withClient((other) => call(other, "test_mrtr_unrelated", {}))
          }
          return accept
        },
      },
    )
  },

  // A $ref to a network URI: list the tools, never fetch it.
  "json-schema-ref-no-deref": async () => {
    log(`tools: ${(await listTools()).map((tool) => tool.name).join(", ")}`)
  },

  // The listed inputSchema echoed back verbatim: no keyword stripped on the way.
  "json-schema-2020-12-preservation": async () => {
    const focal = (await listTools()).find((tool) => tool.name === "json_schema_2020_12_tool")
    if (focal?.inputSchema === undefined)
      throw new Error("json_schema_2020_12_tool or its inputSchema is missing")
    await withClient((client) => call(client, "json_schema_echo", { schema: focal.inputSchema }))
  },
}

const run = scenarios[scenario]
if (run === undefined) {
  console.error(`no flow for scenario ${JSON.stringify(scenario)}`)
  process.exit(2)
}
try {
  await run()
  log("done")
} catch (error) {
  console.error(`[${scenario}] ${error?.stack ?? error}`)
  process.exit(1)
}
