/**
 * A server's question as a LangGraph interrupt. Inside a graph, a durable tool whose call waits
 * for input calls `interrupt()` with an `InputInterrupt`; the graph stops, and the app reads the
 * question from the run's `__interrupt__` (or `graph.getState(config).tasks[].interrupts`), asks
 * the user, and resumes with `new Command({ resume: answer })`. The resumed tool stores the answer
 * (`client.answer`: checked against the question, stored, then sent) before anything else, and a
 * question is answered once: a graph resumed again, after a restart or days later, attaches to
 * the call and does not ask or answer it a second time.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The value of the interrupt: which call asks (`key`, the handle), which of its questions
 * (`inputKey`), and the question as the server sent it (`request`: `elicitation/create`,
 * `sampling/createMessage`, `roots/list`, with its `params`). The resume value is the answer: for
 * an elicitation, `{ action: "accept", content }`, `{ action: "decline" }` or `{ action: "cancel" }`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InputInterrupt = Schema.Struct({
  type: Schema.Literal("mcp-handles/input"),
  server: Schema.String,
  tool: Schema.String,
  key: Schema.String,
  inputKey: Schema.String,
  /** What the server asks, in a sentence. */
  message: Schema.String,
  request: Schema.Struct({ method: Schema.String, params: Schema.optional(Schema.Unknown) }),
})

/**
 * @since 0.1.0
 * @category models
 */
export type InputInterrupt = typeof InputInterrupt.Type

/**
 * Whether an interrupt's value is a question of a durable tool.
 *
 * @since 0.1.0
 * @category predicates
 */
export const is: (value: unknown) => value is InputInterrupt = Schema.is(InputInterrupt)
