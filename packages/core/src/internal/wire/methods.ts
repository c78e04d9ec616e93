/**
 * The six requests of the port, on top of one `rpc` that sends a request and returns the raw
 * `result` object or a classified error. Shared by every transport (HTTP, stdio).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Stream from "effect/Stream"
import type * as Json from "../../Json.js"
import {
  type CallAnswer,
  InvalidToolDefinition,
  idempotencyKeyMeta,
  type ListenEvent,
  MalformedAnswer,
  type ProgressNotice,
  type ServerEndpoint,
  type ToolInfo,
  Wire,
  type WireError,
} from "../../Wire.js"
import * as Negotiation from "./negotiation.js"
import * as Protocol from "./protocol.js"
import * as ToolDefinitions from "./toolDefinitions.js"

/** Sends one request with the envelope; `extraMeta` joins `params._meta`. @internal */
export type Rpc = (
  server: ServerEndpoint,
  method: string,
  params: Json.JsonObject,
  extraMeta?: Json.JsonObject,
  /** Told each notification the server sends on the answer's stream. */
  onNotification?: (message: { readonly method: string; readonly params?: unknown }) => void,
) => Effect.Effect<Json.JsonObject, WireError>

/** The progress notices of one request, from the notifications on its answer's stream. */
const progressOf =
  (token: string, onProgress: (notice: ProgressNotice) => void) =>
  (message: { readonly method: string; readonly params?: unknown }) => {
    const params = message.params as Record<string, unknown> | undefined
    if (message.method !== "notifications/progress" || params?.progressToken !== token) return
    const { progress, total, message: text } = params
    if (typeof progress !== "number" || !Number.isFinite(progress)) return
    onProgress({
      progress,
      ...(typeof total === "number" && Number.isFinite(total) ? { total } : {}),
      ...(typeof text === "string" ? { message: text } : {}),
    })
  }

/** `tools/list` pages followed at most; a server that keeps handing out cursors is malformed. */
const maxToolPages = 1000

/** An answer decoded to `A`, or the reason it is malformed as a `MalformedAnswer`. @internal */
export const malformed =
  (method: string) =>
  <A>(decoded: Either.Either<A, string>): Effect.Effect<A, MalformedAnswer> =>
    Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(new MalformedAnswer({ method, reason: decoded.left }))

/** What the requests take from the adapter's options. @internal */
export interface Options {
  readonly protocolVersions?: ReadonlyArray<string> | undefined
}

/**
 * Opens a `subscriptions/listen` stream in the endpoint's negotiated `version` (see listen.ts);
 * given by adapters that can hold a stream open.
 *
 * @internal
 */
export type OpenListen = (
  server: ServerEndpoint,
  version: string,
  taskIds: ReadonlyArray<string>,
  /** Asks for `notifications/tools/list_changed` on the stream too, and is called on each. */
  onToolsListChanged?: () => void,
) => Stream.Stream<ListenEvent, WireError>

/** @internal */
export const fromRpc = (sendRpc: Rpc, options: Options = {}, openListen?: OpenListen): Wire => {
  // Every request goes out in the endpoint's negotiated version.
  const negotiation = Negotiation.make(sendRpc, options.protocolVersions)
  const rpc = negotiation.rpc
  // What tools/call needs of each endpoint's tools (custom headers); every listing refreshes it.
  const tools = ToolDefinitions.make((server) => listTools(server))

  const callTool: Wire["callTool"] = (server, request) => {
    const method = "tools/call"
    const params: Record<string, Json.JsonValue> = { name: request.name, arguments: request.arguments }
    if (request.inputResponses !== undefined) params.inputResponses = request.inputResponses
    if (request.requestState !== undefined) params.requestState = request.requestState
    const onProgress = request.onProgress
    const send = (headers: Readonly<Record<string, string>>) =>
      rpc(
        ToolDefinitions.withHeaders(server, headers),
        method,
        params,
        {
          [idempotencyKeyMeta]: request.idempotencyKey,
          ...(onProgress === undefined ? {} : { progressToken: request.idempotencyKey }),
        },
        onProgress === undefined ? undefined : progressOf(request.idempotencyKey, onProgress),
      )
    // What is known when the call is made (`checkTool` lists the endpoint's tools first); a
    // bare call sends no custom headers until a header mismatch has the tools listed.
    const headersKnown = Effect.sync(() =>
      ToolDefinitions.headersOf(tools.knownScanOf(server, request.name), request.arguments),
    )
    const headersNow = tools
      .scanOf(server, request.name)
      .pipe(Effect.map((scan) => ToolDefinitions.headersOf(scan, request.arguments)))
    return Effect.flatMap(headersKnown, (headers) =>
      send(headers).pipe(
        // A header mismatch proves the call was not processed: the tool's definition changed.
        // Learn it again, and send once more if that changes the headers.
        Effect.catchIf(
          (error) => error._tag === "RpcErrorAnswer" && error.error.code === ToolDefinitions.headerMismatch,
          (error) =>
            Effect.suspend(() => {
              tools.forget(server)
              return Effect.flatMap(headersNow, (again) =>
                JSON.stringify(again) === JSON.stringify(headers) ? Effect.fail(error) : send(again),
              )
            }),
        ),
      ),
    ).pipe(
      Effect.flatMap((result) => {
        const decoded = Protocol.decodeCallAnswer(result)
        if (Either.isRight(decoded)) return Effect.succeed<CallAnswer>(decoded.right)
        // A task the server announced is never thrown away, even when its handle is malformed; an
        // id named by an answer we cannot read at all is kept too (see MalformedAnswer).
        const named = typeof result.taskId === "string" ? result.taskId : undefined
        const kept =
          named === undefined
            ? {}
            : result.resultType === "task"
              ? { taskId: named }
              : Protocol.isKnownResultType(result.resultType)
                ? {}
                : { namedTaskId: named }
        return Effect.fail(new MalformedAnswer({ method, reason: decoded.left, ...kept }))
      }),
    )
  }

  const listTools: Wire["listTools"] = (server) =>
    Effect.gen(function* () {
      const method = "tools/list"
      const all: Array<ToolInfo> = []
      const seen = new Set<string>()
      let cursor: string | undefined
      for (let page = 0; page < maxToolPages; page++) {
        const result = yield* rpc(server, method, cursor === undefined ? {} : { cursor })
        const decoded = yield* malformed(method)(Protocol.decodeToolsPage(result))
        all.push(...decoded.tools)
        if (decoded.nextCursor === undefined) {
          tools.remember(server, all)
          return all
        }
        if (seen.has(decoded.nextCursor)) {
          return yield* new MalformedAnswer({ method, reason: "tools/list repeated a cursor" })
        }
        seen.add(decoded.nextCursor)
        cursor = decoded.nextCursor
      }
      return yield* new MalformedAnswer({
        method,
        reason: `tools/list did not end within ${maxToolPages} pages`,
      })
    })

  const checkTool: Wire["checkTool"] = (server, tool) =>
    Effect.flatMap(tools.scanOf(server, tool), (scan) =>
      scan?._tag === "Invalid"
        ? Effect.fail(new InvalidToolDefinition({ server: server.name, tool, reason: scan.reason }))
        : Effect.void,
    )

  return Wire.of({
    checkTool,
    listen:
      openListen === undefined
        ? undefined
        : (server, taskIds) =>
            // The stream is where a 2026-07-28 server says its tools changed: the definitions
            // are learnt again before the next call is checked.
            openListen(server, negotiation.versionOf(server), taskIds, () => tools.forget(server)),
    discover: (server) =>
      rpc(server, "server/discover", {}).pipe(
        Effect.flatMap((result) => malformed("server/discover")(Protocol.decodeDiscover(result))),
        Effect.tap((info) => negotiation.discovered(server, info.protocolVersions)),
      ),
    listTools,
    callTool,
    getTask: (server, taskId) =>
      rpc(server, "tasks/get", { taskId }).pipe(
        Effect.flatMap((result) => malformed("tasks/get")(Protocol.decodeTaskState(result, taskId))),
      ),
    updateTask: (server, taskId, inputResponses) =>
      rpc(server, "tasks/update", { taskId, inputResponses }).pipe(
        Effect.flatMap((result) => malformed("tasks/update")(Protocol.decodeAck(result))),
      ),
    cancelTask: (server, taskId) =>
      rpc(server, "tasks/cancel", { taskId }).pipe(
        Effect.flatMap((result) => malformed("tasks/cancel")(Protocol.decodeAck(result))),
      ),
  })
}
