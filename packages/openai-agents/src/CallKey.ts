/**
 * The durable key of a tool call: the idempotency key its row is stored under. The OpenAI Agents
 * SDK (0.20) gives an `MCPServer` no tool-call id: it calls `callTool(name, args, meta, { signal })`,
 * with `meta` from the server's `toolMetaResolver({ runContext, serverName, toolName, arguments })`.
 * So the key is derived from what a restarted run finds again: the app's run (or conversation)
 * id, the turn (the run's model request count, which a serialised `RunState` carries), the tool,
 * the ordinal of this call among the turn's calls of the same tool with the same arguments, and a
 * hash of the arguments. A run resumed from its `RunState`, or re-run from the start, makes the
 * same calls in the same turns and derives the same keys: it attaches to the calls already
 * recorded instead of launching them again. (A call the run makes again after its outcome never
 * reached the run, as a failed run retried does, takes the key it had: see `DurableMcpServer`.)
 *
 * @since 0.1.0
 */
import { AgentTool } from "@mcp-handles/core"

/**
 * What a key is derived from.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallIdentity {
  /** The app's id of the run or conversation, stable across restarts. */
  readonly runId: string
  /** The run's model requests so far (`runContext.usage.requests`): the turn the call belongs to. */
  readonly turn: number
  /** The tool's name on the MCP server. */
  readonly tool: string
  /** The arguments as the model gave them. */
  readonly args: Record<string, unknown>
  /** 1 for the turn's first call of this tool with these arguments, 2 for the next, and so on. */
  readonly ordinal: number
}

/**
 * Derives a key. A custom one must be stable for a tool call (the same identity gives the same
 * key after a restart) and distinct across tool calls.
 *
 * @since 0.1.0
 * @category models
 */
export type Derive = (call: CallIdentity) => string

/** JSON with object keys sorted, so that `{a, b}` and `{b, a}` hash alike. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const fnvPrime = 0x100000001b3n
const fnvOffset = 0xcbf29ce484222325n
const mask = 0xffffffffffffffffn

/**
 * A 64-bit FNV-1a hash of the arguments' canonical JSON, in hex. Not a security measure: two
 * calls that collide also share a turn and an ordinal only by a freak, and the client refuses a
 * key reused with other arguments (`KeyReused`) rather than attach to it.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashArgs = (args: unknown): string => {
  let hash = fnvOffset
  for (const byte of new TextEncoder().encode(canonical(args))) {
    hash ^= BigInt(byte)
    hash = (hash * fnvPrime) & mask
  }
  return hash.toString(16).padStart(16, "0")
}

const partsOf = ({ turn, tool, args, ordinal }: CallIdentity) => [
  String(turn),
  tool,
  String(ordinal),
  hashArgs(args),
]

/**
 * The default: `{runId}:{turn}:{tool}:{ordinal}:{hash of the arguments}`, with a `:` in the run
 * id or the tool written `%3A` (and `%` as `%25`), so that the run is the key's whole first part;
 * ids with neither are written as they are.
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive: Derive = (call) => AgentTool.keyOf(call.runId, partsOf(call))

/**
 * The default key as versions before the escaping derived it (the parts joined as they are): a
 * call recorded under it is attached to, not launched again.
 *
 * @since 0.2.0
 * @category constructors
 */
export const legacy: Derive = (call) => AgentTool.legacyKeyOf(call.runId, partsOf(call))

/**
 * Whether `handle` is a key the default derivation gives for `runId`: the companion tools of
 * handle mode look only at the calls of their own run (run `a` never at those of `a:b`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const belongsTo = (runId: string, handle: string): boolean => AgentTool.belongsTo(runId, handle, 4)
