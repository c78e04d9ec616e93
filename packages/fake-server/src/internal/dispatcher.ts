import {
  type Call,
  declaresTasks,
  failure,
  type HandlerResult,
  result,
  type ServerContext,
} from "./context.js"
import { discover, listTools } from "./discovery.js"
import { TASKS_EXTENSION } from "./envelope.js"
import { methodNotFound, missingCapability, RpcFailure } from "./rpc-error.js"
import { cancelTask, decodeListen, getTask, updateTask } from "./task-methods.js"
import { callTool } from "./tool-call.js"

type Handler = (context: ServerContext, call: Call) => HandlerResult

const requireTasks =
  (handler: Handler): Handler =>
  (context, call) =>
    declaresTasks(call.request.clientCapabilities)
      ? handler(context, call)
      : failure(missingCapability({ extensions: { [TASKS_EXTENSION]: {} } }))

const listen: Handler = (context, call) => {
  const decoded = decodeListen(call.request.params)
  if (decoded instanceof RpcFailure) return failure(decoded)
  if (decoded.taskIds.length > 0 && !declaresTasks(call.request.clientCapabilities)) {
    return failure(missingCapability({ extensions: { [TASKS_EXTENSION]: {} } }))
  }
  // Only tasks that exist now are agreed to; the acknowledgement says which.
  const agreed = decoded.taskIds.filter((taskId) => context.store.lookup(taskId, call.now).kind === "live")
  return { kind: "stream", stream: context.subscriptions.listen(call.request.id, agreed, call.signal) }
}

/**
 * The served methods. Everything else, including the removed `tasks/list` and `tasks/result` and
 * the 2025-era `initialize` / `ping`, is -32601 (HTTP 404).
 */
const METHODS: Readonly<Record<string, Handler>> = {
  "server/discover": (context) => result(discover(context)),
  "tools/list": (context) => result(listTools(context)),
  "tools/call": callTool,
  "tasks/get": requireTasks(getTask),
  "tasks/update": requireTasks(updateTask),
  "tasks/cancel": requireTasks(cancelTask),
  "subscriptions/listen": listen,
}

export const dispatch = (context: ServerContext, call: Call): HandlerResult => {
  const method = call.request.method
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined
  if (handler === undefined) return failure(methodNotFound(method))
  return handler(context, call)
}
