import type { Json } from "../json.js"
import type { ServerContext } from "./context.js"
import { SERVER_INFO_KEY, TASKS_EXTENSION } from "./envelope.js"
import { advertisedTaskSupport, behaviourOf } from "./tool-behaviour.js"

export const DEFAULT_SERVER_INFO = { name: "mcp-handles-fake-server", version: "0.1.0" } as const
export const DEFAULT_SUPPORTED_VERSIONS = ["2026-07-28"] as const

export const discover = (context: ServerContext): Record<string, Json> => ({
  resultType: "complete",
  supportedVersions: [...(context.config.supportedVersions ?? DEFAULT_SUPPORTED_VERSIONS)],
  capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
  // The list never changes during a run, but it is the caller's configuration: no sharing.
  ttlMs: 0,
  cacheScope: "private",
  _meta: { [SERVER_INFO_KEY]: { ...(context.config.serverInfo ?? DEFAULT_SERVER_INFO) } },
})

export const listTools = (context: ServerContext): Record<string, Json> => ({
  resultType: "complete",
  tools: context.config.tools.map((tool) => {
    const entry: Record<string, Json> = {
      name: tool.name,
      description: tool.description ?? `Fake tool ${tool.name}`,
      inputSchema: tool.inputSchema ?? { type: "object" },
      execution: { taskSupport: advertisedTaskSupport(tool, behaviourOf(context.config, tool)) },
    }
    if (tool.title !== undefined) entry.title = tool.title
    if (tool.annotations !== undefined) entry.annotations = { ...tool.annotations }
    return entry
  }),
  ttlMs: 0,
  cacheScope: "private",
})
