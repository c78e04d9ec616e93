import { defaults } from "../Config.js"
import type { Json } from "../Json.js"
import { advertisedTaskSupport, behaviourOf } from "./behaviour.js"
import type { ServerContext } from "./context.js"
import { serverInfoKey, tasksExtension } from "./envelope.js"

export const discover = (context: ServerContext): Record<string, Json> => ({
  resultType: "complete",
  supportedVersions: [...(context.config.supportedVersions ?? defaults.supportedVersions)],
  capabilities: { tools: {}, extensions: { [tasksExtension]: {} } },
  // The list never changes during a run, but it is the caller's configuration: no sharing.
  ttlMs: 0,
  cacheScope: "private",
  _meta: { [serverInfoKey]: { ...(context.config.serverInfo ?? defaults.serverInfo) } },
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
    // An annotation set to undefined is left out of the JSON, as if absent.
    if (tool.annotations !== undefined) entry.annotations = { ...tool.annotations } as Json
    return entry
  }),
  ttlMs: 0,
  cacheScope: "private",
})
