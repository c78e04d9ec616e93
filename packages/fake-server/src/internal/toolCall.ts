import { defaults, type InputRequests, type Tool, type ToolBehaviour } from "../Config.js"
import type { Json, JsonObject } from "../Json.js"
import type * as Ledger from "../Ledger.js"
import type { TaskRecord } from "../Persistence.js"
import {
  advertisedTaskSupport,
  behaviourOf,
  chooseOutcome,
  durationOf,
  planTask,
  wantsTask,
} from "./behaviour.js"
import {
  type Call,
  declaresTasks,
  failure,
  type HandlerResult,
  result,
  type ServerContext,
  tasksNotDeclared,
  tooManyRequests,
} from "./context.js"
import { isObject } from "./json.js"
import { progressTokenOf } from "./progress.js"
import { decodeRequestState, encodeRequestState } from "./requestState.js"
import { invalidParams, missingCapability, RpcFailure, taskSupportRefused, toolError } from "./rpcFailure.js"
import { viewAt } from "./timeline.js"
import { renderOutcome, taskFields } from "./wire.js"

/** Client capability each kind of server-to-client request needs. */
const capabilityOfInput: Readonly<Record<string, string>> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
}

interface ToolCallParams {
  readonly name: string
  readonly arguments: JsonObject
  readonly inputResponses: JsonObject | undefined
  readonly requestState: string | undefined
}

const decodeParams = (params: Record<string, unknown>): ToolCallParams | RpcFailure => {
  if (typeof params.name !== "string") return invalidParams("Invalid params: name must be a string")
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return invalidParams("Invalid params: arguments must be an object")
  }
  if (params.inputResponses !== undefined && !isObject(params.inputResponses)) {
    return invalidParams("Invalid params: inputResponses must be an object")
  }
  if (params.requestState !== undefined && typeof params.requestState !== "string") {
    return invalidParams("Invalid params: requestState must be a string")
  }
  return {
    name: params.name,
    arguments: (params.arguments ?? {}) as JsonObject,
    inputResponses: params.inputResponses as JsonObject | undefined,
    requestState: params.requestState as string | undefined,
  }
}

export const callTool = (context: ServerContext, call: Call): HandlerResult => {
  const params = decodeParams(call.request.params)
  if (params instanceof RpcFailure) return failure(params)
  const tool = context.tools.get(params.name)
  if (tool === undefined) return failure(invalidParams(`Unknown tool: ${params.name}`))
  const behaviour = behaviourOf(context.config, tool)
  const capabilities = call.request.clientCapabilities

  const missing = missingCapabilities(tool.requiresClientCapabilities ?? {}, capabilities)
  if (missing !== undefined) return failure(missingCapability(missing))
  const withTasks = declaresTasks(capabilities)
  const support = advertisedTaskSupport(tool, behaviour)
  const asked = call.taskRequested
  // A tool that can only run as a task cannot serve a client that cannot hold one.
  if (asked === undefined && !withTasks && support === "required") return failure(tasksNotDeclared())
  // 2025-11-25: the request itself says task or not, and the tool's taskSupport must allow it.
  if (asked === true && support === "forbidden") return failure(taskSupportRefused(tool.name, support))
  if (asked === false && support === "required") return failure(taskSupportRefused(tool.name, support))
  if (behaviour.rateLimit !== undefined) {
    const retryAfter = context.rateLimiter.take(`tool:${tool.name}`, behaviour.rateLimit, call.now)
    if (retryAfter !== undefined) return tooManyRequests(retryAfter)
  }

  const gathered = gatherRounds(tool, behaviour, params, capabilities)
  if (gathered.kind !== "done") return gathered.reply

  const key = call.request.idempotencyKey
  if (context.config.deduplicateByKey === true && key !== undefined) {
    const previous = context.store.taskIdForKey(key)
    if (previous !== undefined) {
      const found = context.store.lookup(previous, call.now)
      if (found.kind === "live") {
        return result({
          resultType: "task",
          ...taskFields({
            record: found.record,
            view: viewAt(found.record, call.now),
            now: call.now,
            skewMs: call.skewMs,
          }),
        })
      }
    }
  }

  const launching: Launching = { context, call, tool, behaviour, params, inputs: gathered.inputs }
  const asTask = asked ?? (wantsTask(behaviour, context.shapeRandom) && withTasks)
  return asTask ? launchTask(launching) : launchDirect(launching)
}

type Gathered =
  | { readonly kind: "done"; readonly inputs: JsonObject }
  | { readonly kind: "reply"; readonly reply: HandlerResult }

/**
 * Multi round-trip rounds on `tools/call`: each round asks for its inputs with an
 * `input_required` result; the client retries with the answers and the `requestState`.
 */
const gatherRounds = (
  tool: Tool,
  behaviour: ToolBehaviour,
  params: ToolCallParams,
  capabilities: Record<string, unknown>,
): Gathered => {
  const rounds = behaviour.mrtrRounds ?? []
  if (rounds.length === 0) return { kind: "done", inputs: {} }
  let round = 0
  let inputs: Record<string, Json> = {}
  if (params.requestState !== undefined) {
    const state = decodeRequestState(params.requestState)
    if (state === undefined || state.tool !== tool.name || state.round >= rounds.length) {
      return {
        kind: "reply",
        reply: failure(invalidParams("Invalid params: requestState was not issued by this server")),
      }
    }
    round = state.round
    inputs = { ...state.inputs }
  }
  const requestsOf = (index: number): InputRequests =>
    behaviour.undeclaredInputs === "omit"
      ? declaredOnly(rounds[index] ?? {}, capabilities)
      : (rounds[index] ?? {})
  const requests = requestsOf(round)
  const missing = missingCapabilities(capabilitiesForInputs(requests), capabilities)
  if (missing !== undefined) return { kind: "reply", reply: failure(missingCapability(missing)) }
  const answers = params.inputResponses ?? {}
  // Partial answers are kept; only the still-missing keys are asked again. An answer that is
  // not an object (no input response is) does not count: the key is asked again.
  const outstanding: Record<string, Json> = {}
  for (const [key, request] of Object.entries(requests)) {
    if (Object.hasOwn(answers, key) && isObject(answers[key])) inputs[key] = answers[key] as Json
    else if (!Object.hasOwn(inputs, key)) outstanding[key] = request as unknown as Json
  }
  if (Object.keys(outstanding).length === 0) {
    round += 1
    if (round >= rounds.length) return { kind: "done", inputs }
  }
  return {
    kind: "reply",
    reply: result({
      resultType: "input_required",
      inputRequests:
        Object.keys(outstanding).length > 0 ? outstanding : (requestsOf(round) as unknown as Json),
      requestState: encodeRequestState({ tool: tool.name, round, inputs }),
    }),
  }
}

/** The requests of a round whose capability the client declared. */
const declaredOnly = (requests: InputRequests, capabilities: Record<string, unknown>): InputRequests =>
  Object.fromEntries(
    Object.entries(requests).filter(([, request]) => {
      const capability = capabilityOfInput[request.method]
      return capability === undefined || isObject(capabilities[capability])
    }),
  )

const capabilitiesForInputs = (requests: InputRequests): Record<string, Json> => {
  const needed: Record<string, Json> = {}
  for (const request of Object.values(requests)) {
    const capability = capabilityOfInput[request.method]
    if (capability !== undefined) needed[capability] = {}
  }
  return needed
}

/** The subset of `required` the client did not declare, or `undefined` when it declared all. */
const missingCapabilities = (
  required: Record<string, Json>,
  declared: Record<string, unknown>,
): { [key: string]: Json } | undefined => {
  const missing: Record<string, Json> = {}
  for (const [name, value] of Object.entries(required)) {
    if (!isObject(declared[name])) missing[name] = value
  }
  return Object.keys(missing).length === 0 ? undefined : missing
}

/** A call that passed every check and runs now: what launching it needs. */
interface Launching {
  readonly context: ServerContext
  readonly call: Call
  readonly tool: Tool
  readonly behaviour: ToolBehaviour
  readonly params: ToolCallParams
  /** Answers gathered by multi round-trip rounds. */
  readonly inputs: JsonObject
}

/** Records one execution of a tool in the ledger: a task created, or a direct answer computed. */
const recordLaunch = (
  { context, call, tool, params }: Launching,
  launched: Pick<Ledger.Launch, "taskId" | "resultType">,
): Ledger.Launch =>
  context.ledger.recordLaunch({
    tool: tool.name,
    arguments: params.arguments,
    idempotencyKey: call.request.idempotencyKey ?? null,
    ...launched,
    at: call.now,
    responseDelivered: true,
    fault: null,
  })

const launchTask = (launching: Launching): HandlerResult => {
  const { context, call, tool, behaviour, params, inputs } = launching
  const taskId = context.newTaskId()
  const key = call.request.idempotencyKey ?? null
  const launch = recordLaunch(launching, { taskId, resultType: "task" })
  const record: TaskRecord = {
    taskId,
    tool: tool.name,
    arguments: params.arguments,
    mrtrInputs: inputs,
    createdAt: call.now,
    plan: planTask(behaviour, params.arguments, context.outcomeRandom),
    launchSeq: launch.seq,
    idempotencyKey: key,
    answers: {},
    cancelRequestedAt: null,
  }
  // Durably created before the answer leaves: a tasks/get right after must resolve.
  context.store.add(record)
  context.ledger.recordTask({
    taskId,
    tool: tool.name,
    launchSeq: launch.seq,
    idempotencyKey: key,
    createdAt: call.now,
  })
  const view = viewAt(record, call.now)
  return result(
    { resultType: "task", ...taskFields({ record, view, now: call.now, skewMs: call.skewMs }) },
    launch,
  )
}

/**
 * The work runs now and its answer leaves when it is done: `durationMs` later, as a real server
 * holds the request (with progress on the way when the client asked for it).
 */
const launchDirect = (launching: Launching): HandlerResult => {
  const { context, tool, behaviour, params, inputs } = launching
  const outcome = chooseOutcome(behaviour.outcome, context.outcomeRandom)
  const rendered = renderOutcome(outcome, { args: params.arguments, inputs, tool: tool.name })
  const launch = recordLaunch(launching, {
    taskId: null,
    resultType: rendered.kind === "result" ? "complete" : "error",
  })
  const answer =
    rendered.kind === "error"
      ? failure(toolError(rendered.error), launch)
      : result({ resultType: "complete", ...rendered.result }, launch)
  const holdMs = Math.max(0, durationOf(behaviour.durationMs, params.arguments))
  const token = progressTokenOf(launching.call.request.params)
  const schedule = behaviour.progress ?? (holdMs > 0 ? defaults.progress : undefined)
  const progress = token === undefined || schedule === undefined ? undefined : { token, schedule }
  if (holdMs === 0 && progress === undefined) return answer
  return { kind: "held", holdMs, answer, progress }
}
