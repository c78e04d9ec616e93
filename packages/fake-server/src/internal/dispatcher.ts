import * as Context from "./context.js"
import { discover, listTools } from "./discovery.js"
import { methodNotFound, RpcFailure } from "./rpcFailure.js"
import { cancelTask, decodeListen, getTask, updateTask } from "./taskMethods.js"
import { callTool } from "./toolCall.js"

type Handler = (context: Context.ServerContext, call: Context.Call) => Context.HandlerResult

const requireTasks =
  (handler: Handler): Handler =>
  (context, call) =>
    Context.declaresTasks(call.request.clientCapabilities)
      ? handler(context, call)
      : Context.failure(Context.tasksNotDeclared())

const listen: Handler = (context, call) => {
  const decoded = decodeListen(call.request.params)
  if (decoded instanceof RpcFailure) return Context.failure(decoded)
  if (decoded.taskIds.length > 0 && !Context.declaresTasks(call.request.clientCapabilities)) {
    return Context.failure(Context.tasksNotDeclared())
  }
  // Only tasks that exist now are agreed to; the acknowledgement says which.
  const agreed = decoded.taskIds.filter((taskId) => context.store.lookup(taskId, call.now).kind === "live")
  return { kind: "stream", stream: context.subscriptions.listen(call.request.id, agreed, call.signal) }
}

/**
 * The served methods. Everything else, including the removed `tasks/list` and `tasks/result` and
 * the 2025-era `initialize` / `ping`, is -32601 (HTTP 404).
 */
const methods: Readonly<Record<string, Handler>> = {
  "server/discover": (context) => Context.result(discover(context)),
  "tools/list": (context) => Context.result(listTools(context)),
  "tools/call": callTool,
  "tasks/get": requireTasks(getTask),
  "tasks/update": requireTasks(updateTask),
  "tasks/cancel": requireTasks(cancelTask),
  "subscriptions/listen": listen,
}

export const dispatch = (context: Context.ServerContext, call: Context.Call): Context.HandlerResult => {
  const method = call.request.method
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined
  if (handler === undefined) return Context.failure(methodNotFound(method))
  return handler(context, call)
}
