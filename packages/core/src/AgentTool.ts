/**
 * What the agent-framework adapters (`@mcp-handles/ai-sdk`, `@mcp-handles/langchain`,
 * `@mcp-handles/openai-agents`) share, framework-free: the `ToolOutput` a durable tool reports of
 * its call (where it stands, under which handle, how it ended) and the sentences the model reads
 * of it; a call launched without waiting past an abort, waited on while its questions are
 * answered, handed off or cancelled when the wait stops; and the companion tools of handle mode
 * (`check_call`, `wait_for_call`: names, input schemas, limits, which handles they accept). Each
 * adapter keeps only its framework's wrapping.
 *
 * The handle is always the call's key, never the server's task id, and a completed result's
 * related-task references are shortened (`Redaction.value`): the output is kept in the app's
 * messages and read by a model.
 *
 * @since 0.6.0
 */
import * as Data from "effect/Data"
import * as Call from "./internal/agentTool/call.js"
import * as Companions from "./internal/agentTool/companions.js"
import * as Output from "./internal/agentTool/output.js"

// --- ToolOutput

/**
 * The call runs on: a preliminary result while a tool waits, or the answer of a tool in handle
 * mode (and of one whose wait stopped).
 *
 * @since 0.6.0
 * @category models
 */
export const Running = Output.Running

/**
 * The call completed: `result` is the `CallToolResult` as the server sent it (related-task
 * references shortened); `isError: true` is the tool saying no.
 *
 * @since 0.6.0
 * @category models
 */
export const Completed = Output.Completed

/**
 * The call or its task failed with a JSON-RPC error.
 *
 * @since 0.6.0
 * @category models
 */
export const Failed = Output.Failed

/**
 * The call rests without a result: cancelled, expired, or in doubt (it may or may not have run
 * on the server, and was not sent again).
 *
 * @since 0.6.0
 * @category models
 */
export const Unfinished = Output.Unfinished

/**
 * @since 0.6.0
 * @category schemas
 */
export const ToolOutput = Output.ToolOutput

/**
 * @since 0.6.0
 * @category models
 */
export type ToolOutput = Output.ToolOutput

/**
 * The output of a call that rests.
 *
 * @since 0.6.0
 * @category constructors
 */
export const fromOutcome = Output.fromOutcome

/**
 * Whether the output is the call's last word (it rests), not a status on the way.
 *
 * @since 0.6.0
 * @category predicates
 */
export const rests = Output.rests

/**
 * The status of a call that runs on (`pending`, `working`, `input_required`), or undefined for
 * one that rests.
 *
 * @since 0.6.0
 * @category predicates
 */
export const runningStatus = Output.runningStatus

/**
 * What the model reads of a failed call.
 *
 * @since 0.6.0
 * @category sentences
 */
export const failedText = Output.failedText

/**
 * The text of a content block: a text block's text, any other block as JSON.
 *
 * @since 0.6.0
 * @category sentences
 */
export const blockText = Output.blockText

/**
 * What the model reads of a tool error (`isError: true`): its content's text, or a sentence when
 * it has none.
 *
 * @since 0.6.0
 * @category sentences
 */
export const errorText = Output.errorText

// --- One call

/**
 * What `launch` came to.
 *
 * @since 0.6.0
 * @category models
 */
export type Launched = Call.Launched

/**
 * `callTool`, given up on (not cancelled) when `signal` aborts first: the call is recorded
 * before the request leaves, so it goes on and can be looked at later. `Aborted.calling` settles
 * once the dispatch does (cancelling needs the row it writes first).
 *
 * @since 0.6.0
 * @category calls
 */
export const launch = Call.launch

/**
 * Where a call that has not come to rest stands, as the store has it now (`message` says what
 * to do next): pending when it is not recorded yet (aborted before its intent was written), its
 * questions when it waits for input, its outcome once it rests.
 *
 * @since 0.6.0
 * @category calls
 */
export const current = Call.current

/**
 * Cancels a call whose wait was aborted (the app asked for it: `onAbort: "cancel"`); says where
 * it stands.
 *
 * @since 0.6.0
 * @category calls
 */
export const cancelled = Call.cancelled

/**
 * What a call waiting for input says, with its questions: the app answers under the handle
 * (`client.answer`, the CLI), or a handler does while a companion waits.
 *
 * @since 0.6.0
 * @category constructors
 */
export const asking = Call.asking

/**
 * How `settle` waits.
 *
 * @since 0.6.0
 * @category models
 */
export type SettleOptions = Call.SettleOptions

/**
 * What `settle` came to: the call rests, the signal stopped the wait, or the call asks questions
 * nobody here answers.
 *
 * @since 0.6.0
 * @category models
 */
export type Settled = Call.Settled

/**
 * Waits for a call to rest, answering its questions with `onInput` on the way.
 *
 * @since 0.6.0
 * @category calls
 */
export const settle = Call.settle

/**
 * What a tool in handle mode says of a call it started.
 *
 * @since 0.6.0
 * @category sentences
 */
export const started = Call.started

/**
 * What a wait that stopped says of a call that runs on: with companions, to look again with
 * them; without, not to call the tool again (`again` says how the framework picks it up).
 *
 * @since 0.6.0
 * @category sentences
 */
export const stopped = Call.stopped

/**
 * A tool's description, with what handle mode changes.
 *
 * @since 0.6.0
 * @category tools
 */
export const describe = Call.describe

/**
 * A tool's input schema as the model sees it: an object schema, whatever the server sent.
 *
 * @since 0.6.0
 * @category tools
 */
export const inputSchema = Call.inputSchema

// --- Companions

/**
 * The companion tools' names.
 *
 * @since 0.6.0
 * @category companions
 */
export const companionNames = Companions.names

/**
 * @since 0.6.0
 * @category companions
 */
export type CompanionName = Companions.Name

/**
 * Whether a tool name is a companion's.
 *
 * @since 0.6.0
 * @category companions
 */
export const isCompanion = Companions.isName

/**
 * The longest `wait_for_call` waits, in seconds, so that a turn of the model never hangs on it.
 *
 * @since 0.6.0
 * @category companions
 */
export const maxWaitSeconds = Companions.maxWaitSeconds

/**
 * A companion tool as a framework lists it: name, description, JSON Schema of its input.
 *
 * @since 0.6.0
 * @category companions
 */
export type Companion = Companions.Definition

/**
 * The companion tools, by name.
 *
 * @since 0.6.0
 * @category companions
 */
export const companions = Companions.definitions

/**
 * A companion's input: `{ handle, seconds? }` (`seconds` only for `wait_for_call`).
 *
 * @since 0.6.0
 * @category companions
 */
export type CompanionInput = Companions.Input

/**
 * Decodes a companion's input as the model gave it; the error is a text the model reads.
 *
 * @since 0.6.0
 * @category companions
 */
export const decodeCompanionInput = Companions.decode

/**
 * Whether `handle` is a key the adapters' default derivation gives for `owner` (a conversation,
 * thread or run id), with `parts` parts after it (default 1): the companions look only at their
 * owner's calls. The owner must be the key's whole first part (`keyOf` escapes a `:` in it), so
 * conversation `a` never owns a call of conversation `a:b`; a key derived before that escaping
 * (an owner id with a `:` or `%`) still belongs to its owner.
 *
 * @since 0.6.0
 * @category companions
 */
export const belongsTo = Companions.belongsTo

/**
 * The adapters' default key: the owner and the call's parts joined by `:`, each part with `%`
 * written `%25` and `:` written `%3A` (a part with neither is written as it is).
 *
 * @since 0.7.0
 * @category companions
 */
export const keyOf = Companions.keyOf

/**
 * The default key as versions before `keyOf` derived it: the parts joined as they are. Calls
 * recorded then are still found under it (see `keyInUse`).
 *
 * @since 0.7.0
 * @category companions
 */
export const legacyKeyOf = Companions.legacyKeyOf

/**
 * The key a call goes under: `legacy` when a call is recorded under it (derived by an older
 * version for the same tool call), else `key`. One store read, only when the two differ.
 *
 * @since 0.7.0
 * @category companions
 */
export const keyInUse = Companions.keyInUse

/**
 * Where a companion runs: the scope, which handles it accepts, and what its owner is called in a
 * refusal (`conversation`, `thread`, `run`).
 *
 * @since 0.6.0
 * @category companions
 */
export type CompanionOptions = Companions.Options

/**
 * A companion call let in (its input decoded, its handle one of the owner's and on record, with
 * the tool it calls), or refused with a sentence the model reads.
 *
 * @since 0.6.0
 * @category companions
 */
export type Admitted = Companions.Admitted

/**
 * Lets a companion call in, or refuses it.
 *
 * @since 0.6.0
 * @category companions
 */
export const admit = Companions.admit

/**
 * How long `wait_for_call` waits: its `seconds` (default 30), or until `signal` aborts.
 *
 * @since 0.6.0
 * @category companions
 */
export const waitLimit = Companions.limit

/**
 * What `wait_for_call` says of a call still running when its time is up.
 *
 * @since 0.6.0
 * @category sentences
 */
export const waitAgain = Companions.waitAgain

/**
 * What `check_call` says of a call still running.
 *
 * @since 0.6.0
 * @category sentences
 */
export const lookAgain = Companions.lookAgain

/**
 * What a companion call gives: the output the model reads, or a refusal.
 *
 * @since 0.6.0
 * @category companions
 */
export type Served = Companions.Served

/**
 * A companion call served: `check_call` says where the call stands; `wait_for_call` waits (its
 * questions go to `onInput`; without it, the output says what the call asks).
 *
 * @since 0.6.0
 * @category companions
 */
export const serveCompanion = Companions.serve

/**
 * The server has a tool named like a companion tool (`check_call`, `wait_for_call`): leave it
 * out (an adapter's `tools` or tool filter), or turn the companions off (`companions: false`).
 *
 * @since 0.6.0
 * @category errors
 */
export class CompanionNameTaken extends Data.TaggedError("CompanionNameTaken")<{
  readonly server: string
  readonly tool: string
}> {
  override get message(): string {
    return `the server ${this.server} has a tool named ${this.tool}, like a companion tool: leave one of them out (the server's tool, or the companions with companions: false)`
  }
}

/**
 * Throws `CompanionNameTaken` when one of the server's tools is named like a companion.
 *
 * @since 0.6.0
 * @category companions
 */
export const checkCompanionNames = (server: string, tools: Iterable<string>): void => {
  for (const tool of tools) if (isCompanion(tool)) throw new CompanionNameTaken({ server, tool })
}
