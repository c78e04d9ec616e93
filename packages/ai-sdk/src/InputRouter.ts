/**
 * Input requests (a server asking the user mid-task) reach a client through the one handler it
 * was opened with; a router is that handler, and hands each question to the tool set whose call
 * asked it: the `onInput` of `mcpTools`, while that call is waited on in this process. A
 * question nobody here is waiting for goes to the fallback, or stays unanswered: the client asks
 * again at its next poll, so a run that comes back (after a restart, with a handler) answers it
 * then. Every answer is stored before it is sent, and a question is answered once.
 *
 * ```ts
 * const input = InputRouter.make()
 * await using client = await openTaskClient({ store, servers, onInputRequired: input.onInputRequired })
 * const tools = await mcpTools(client, { server: "research", conversationId, input, onInput })
 * ```
 *
 * @since 0.1.0
 */
import type { Json, PromiseClient } from "@mcp-handles/core"
import * as Data from "effect/Data"

/**
 * Answers one input request: for an elicitation, `{ action: "accept", content }`,
 * `{ action: "decline" }` or `{ action: "cancel" }`.
 *
 * @since 0.1.0
 * @category models
 */
export type InputHandler = (request: PromiseClient.PromiseInputRequest) => Promise<Json.JsonInput>

/**
 * No handler waits for this call's questions in this process (and there is no fallback): the
 * question stays open and is asked again later.
 *
 * @since 0.1.0
 * @category errors
 */
export class NoInputHandler extends Data.TaggedError("NoInputHandler")<{
  readonly key: string
  readonly inputKey: string
}> {
  override get message(): string {
    return `nobody waits for call ${JSON.stringify(this.key)} here to answer ${JSON.stringify(this.inputKey)}; it is asked again later`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface InputRouter {
  /** The client's handler: pass it as `onInputRequired` to `openTaskClient`. */
  readonly onInputRequired: InputHandler
  /** Sends the questions of call `key` to `handler` until the returned function is called. */
  readonly route: (key: string, handler: InputHandler) => () => void
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Answers questions of calls nobody waits for here. Default: none (they stay open). */
  readonly fallback?: InputHandler | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): InputRouter => {
  // Several waits on one key (a tool and a companion tool) stack: the latest answers.
  const routes = new Map<string, Array<InputHandler>>()
  return {
    onInputRequired: (request) => {
      const handler = routes.get(request.key)?.at(-1) ?? options.fallback
      return handler === undefined
        ? Promise.reject(new NoInputHandler({ key: request.key, inputKey: request.inputKey }))
        : handler(request)
    },
    route: (key, handler) => {
      const stack = routes.get(key) ?? []
      stack.push(handler)
      routes.set(key, stack)
      return () => {
        const at = stack.lastIndexOf(handler)
        if (at >= 0) stack.splice(at, 1)
        if (stack.length === 0 && routes.get(key) === stack) routes.delete(key)
      }
    },
  }
}
