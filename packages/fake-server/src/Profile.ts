/**
 * Built-in configurations the binary serves with `--profile NAME`.
 *
 * @since 0.1.0
 */
import type { Config, InputRequest } from "./Config.js"

const confirm = (message: string, property: string): InputRequest => ({
  method: "elicitation/create",
  params: {
    mode: "form",
    message,
    requestedSchema: {
      type: "object",
      properties: { [property]: { type: "boolean" } },
      required: [property],
    },
  },
})

/**
 * Tools that satisfy the fixtures of the official conformance suite
 * (`@modelcontextprotocol/conformance` 0.2.0-alpha.12): the `tasks-*` scenarios, `server-stateless`,
 * `tools-list`, `tools-call-simple-text` and `http-header-validation`. Each tool's comment names the
 * scenario contract it follows.
 *
 * @since 0.1.0
 * @category profiles
 */
export const conformance: Config = {
  seed: 2663,
  defaults: { pollIntervalMs: 100, ttlMs: 600_000 },
  tools: [
    {
      // tools-call-simple-text. Listed first: http-header-validation calls the first tool with `{}`.
      name: "test_simple_text",
      description: "Returns a fixed text",
      shape: "direct",
      outcome: { kind: "result", text: "This is a simple text response for testing." },
    },
    {
      // Sync-only: "Hello, {name}!".
      name: "greet",
      description: "Greets someone, synchronously",
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
      shape: "direct",
      outcome: { kind: "result", text: "Hello, {{args.name|World}}!" },
    },
    {
      // Task-supporting: `seconds` of work, then a result; settles `cancelled` when cancelled.
      name: "slow_compute",
      description: "Computes for `seconds` seconds",
      inputSchema: {
        type: "object",
        properties: { seconds: { type: "number" }, label: { type: "string" } },
      },
      annotations: { idempotentHint: true },
      taskSupport: "optional",
      durationMs: { fromArgument: "seconds", multiplier: 1000, defaultMs: 1000 },
      outcome: { kind: "result", text: "Computed {{args.label|result}} after {{args.seconds|1}}s" },
    },
    {
      // Task support `required`; ends with a tool error (completed, isError) after about a second.
      name: "failing_job",
      description: "Always ends with a tool error",
      taskSupport: "required",
      durationMs: 1000,
      outcome: { kind: "result", text: "The job failed", isError: true },
    },
    {
      // Ends `failed` with a JSON-RPC error inlined.
      name: "protocol_error_job",
      description: "Always fails with a protocol error",
      taskSupport: "optional",
      durationMs: 200,
      outcome: { kind: "error", code: -32603, message: "Internal error while running the job" },
    },
    {
      // Parks on one elicitation, completes when it is answered.
      name: "confirm_delete",
      description: "Asks for confirmation, then deletes",
      inputSchema: { type: "object", properties: { filename: { type: "string" } } },
      annotations: { destructiveHint: true },
      taskSupport: "optional",
      inputSteps: [{ atMs: 0, requests: { confirm: confirm("Delete {{args.filename}}?", "confirm") } }],
      durationMs: 100,
      outcome: { kind: "result", text: "Deleted {{args.filename}}" },
    },
    {
      // Two elicitations outstanding at once (partial answers keep the task input_required).
      name: "multi_input",
      description: "Asks two questions at once",
      taskSupport: "optional",
      inputSteps: [
        {
          atMs: 0,
          requests: {
            first: confirm("First question?", "confirm"),
            second: confirm("Second question?", "confirm"),
          },
        },
      ],
      durationMs: 100,
      outcome: { kind: "result", text: "Both answers received" },
    },
    {
      // tasks-mrtr-composition: one MRTR round for `user_name`, then a task whose result echoes it.
      name: "test_tool_with_task",
      description: "Gathers a name over MRTR, then works as a task",
      taskSupport: "required",
      mrtrRounds: [
        {
          user_name: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: "What is your name?",
              requestedSchema: {
                type: "object",
                properties: { name: { type: "string" } },
                required: ["name"],
              },
            },
          },
        },
      ],
      durationMs: 200,
      outcome: { kind: "result", text: "Hello, {{inputs.user_name.content.name}}!" },
    },
    {
      // server-stateless: needs the `sampling` capability the probe does not declare (-32021).
      name: "test_missing_capability",
      description: "Requires the sampling capability",
      shape: "direct",
      requiresClientCapabilities: { sampling: {} },
      outcome: { kind: "result", text: "sampled" },
    },
    {
      // server-stateless: the response stream carries only an input_required result, no requests.
      name: "test_streaming_elicitation",
      description: "Asks for input over MRTR",
      shape: "direct",
      mrtrRounds: [{ answer: confirm("Continue?", "confirm") }],
      outcome: { kind: "result", text: "continued" },
    },
    {
      // server-stateless: must not log without `_meta` logLevel (this server never logs).
      name: "test_logging_tool",
      description: "Would log, but only when asked to",
      shape: "direct",
      outcome: { kind: "result", text: "no logs" },
    },
  ],
}
