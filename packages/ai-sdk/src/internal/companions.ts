/**
 * The companion tools of handle mode (core's `AgentTool` companions) as AI SDK tools: only
 * handles of their own conversation. `wait_for_call` streams what happens on the way, as a
 * durable tool does, and its questions go to the conversation's `onInput` through the router.
 */
import { AgentTool, type PromiseClient } from "@mcp-handles/core"
import { jsonSchema, type ToolSet, tool } from "ai"
import * as Either from "effect/Either"
import * as ToolOutput from "../ToolOutput.js"
import { feed, follow } from "./follow.js"

/** @internal */
export interface Options {
  readonly scope: string | undefined
  readonly owns: (handle: string) => boolean
  readonly progress: boolean
  readonly route: (key: string) => (() => () => void) | undefined
}

/** The model's input, decoded at the boundary: the AI SDK reports a failure to the model. */
const inputSchema = (name: AgentTool.CompanionName) =>
  jsonSchema<AgentTool.CompanionInput>(AgentTool.companions[name].inputSchema as never, {
    validate: (value) =>
      Either.match(AgentTool.decodeCompanionInput(name, value), {
        onLeft: (message) => ({ success: false as const, error: new Error(message) }),
        onRight: (decoded) => ({ success: true as const, value: decoded }),
      }),
  })

/** @internal */
export const make = (client: PromiseClient.PromiseTaskClient, options: Options): ToolSet => {
  const where = { scope: options.scope, owns: options.owns, within: "conversation" }
  /** A refusal is thrown: the AI SDK hands the model a tool error. */
  const admit = async (name: AgentTool.CompanionName, input: AgentTool.CompanionInput) => {
    const admitted = await AgentTool.admit(client, name, input, where)
    if (admitted._tag === "Refused") throw new Error(admitted.message)
    return admitted.input
  }
  return {
    check_call: tool({
      description: AgentTool.companions.check_call.description,
      inputSchema: inputSchema("check_call"),
      execute: async (input) => {
        const { handle } = await admit("check_call", input)
        return await AgentTool.current(client, handle, options.scope, AgentTool.lookAgain)
      },
      toModelOutput: ({ output }) => ToolOutput.toModelOutput(output),
    }),
    wait_for_call: tool({
      description: AgentTool.companions.wait_for_call.description,
      inputSchema: inputSchema("wait_for_call"),
      execute: async function* (input, { abortSignal }) {
        const admitted = await admit("wait_for_call", input)
        const { handle } = admitted
        const events = options.progress ? feed(client, handle, options.scope) : undefined
        try {
          yield* follow({
            client,
            key: handle,
            scope: options.scope,
            signal: AgentTool.waitLimit(admitted, abortSignal),
            feed: events,
            route: options.route(handle),
            stopped: AgentTool.waitAgain,
          })
        } finally {
          await events?.close()
        }
      },
      toModelOutput: ({ output }) => ToolOutput.toModelOutput(output),
    }),
  }
}
