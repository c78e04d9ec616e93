/**
 * Built-in configurations the binary serves with `--profile NAME`.
 *
 * @since 0.1.0
 */
import type { Config, InputRequest, Tool } from "./Config.js"
import type { JsonObject } from "./Json.js"

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

const elicit = (message: string, property: string, type: string): InputRequest => ({
  method: "elicitation/create",
  params: {
    message,
    requestedSchema: { type: "object", properties: { [property]: { type } }, required: [property] },
  },
})

const sample = (text: string, maxTokens: number): InputRequest => ({
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text } }], maxTokens },
})

const listRoots: InputRequest = { method: "roots/list", params: {} }

/** A 1x1 red PNG. */
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

/** A WAV header with one silent 8-bit sample at 8 kHz. */
const wav = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA"

/** The inputSchema `json-schema-2020-12` expects to find intact in `tools/list`. */
const jsonSchema202012: JsonObject = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword; this object is never awaited
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
}

/**
 * The fixtures of the suite's 2026-07-28 tool scenarios: content types, tool errors, progress,
 * JSON Schema 2020-12 keywords, `x-mcp-header` and the `input-required-result-*` (SEP-2322)
 * multi round-trip tools. All direct: none of these scenarios declares the tasks extension.
 */
const fixtureTools: readonly Tool[] = [
  {
    // tools-call-image.
    name: "test_image_content",
    description: "Answers with an image (a 1x1 PNG)",
    shape: "direct",
    outcome: { kind: "result", content: [{ type: "image", data: png, mimeType: "image/png" }] },
  },
  {
    // tools-call-audio.
    name: "test_audio_content",
    description: "Answers with audio (one silent WAV sample)",
    shape: "direct",
    outcome: { kind: "result", content: [{ type: "audio", data: wav, mimeType: "audio/wav" }] },
  },
  {
    // tools-call-embedded-resource.
    name: "test_embedded_resource",
    description: "Answers with an embedded text resource",
    shape: "direct",
    outcome: {
      kind: "result",
      content: [
        {
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        },
      ],
    },
  },
  {
    // tools-call-mixed-content.
    name: "test_multiple_content_types",
    description: "Answers with a text, an image and an embedded resource",
    shape: "direct",
    outcome: {
      kind: "result",
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: png, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: '{"test":"data","value":123}',
          },
        },
      ],
    },
  },
  {
    // tools-call-error: a tool error (isError), not a JSON-RPC error.
    name: "test_error_handling",
    description: "Answers with a tool error (isError)",
    shape: "direct",
    outcome: { kind: "result", text: "This tool intentionally returns an error for testing", isError: true },
  },
  {
    // tools-call-with-progress: 0, 50, 100 of 100, about 50 ms apart, when a progressToken is given.
    name: "test_tool_with_progress",
    description:
      "Reports progress 0, 50 and 100 about 50 ms apart when the call has a progress token, then answers",
    shape: "direct",
    progress: { steps: [0, 50, 100], total: 100, intervalMs: 50 },
    outcome: { kind: "result", text: "Progress reported" },
  },
  {
    // json-schema-2020-12: the keywords must survive tools/list untouched.
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: jsonSchema202012,
    shape: "direct",
    outcome: { kind: "result", text: "ok" },
  },
  {
    // http-custom-header-server-validation: a string argument mirrored into Mcp-Param-Region.
    name: "test_param_header",
    description: "Echoes the region it was routed by (its Mcp-Param-Region header)",
    inputSchema: {
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
      required: ["region"],
    },
    shape: "direct",
    outcome: { kind: "result", text: "Region {{args.region}}" },
  },
  {
    // input-required-result-basic-elicitation (and -missing-input-response, -result-type,
    // -ignore-extra-params, -validate-input): one elicitation, then "Hello, <name>!".
    name: "test_input_required_result_elicitation",
    description: 'Asks a name (an elicitation, over a multi round-trip), then answers "Hello, {name}!"',
    shape: "direct",
    mrtrRounds: [{ user_name: elicit("What is your name?", "name", "string") }],
    outcome: { kind: "result", text: "Hello, {{inputs.user_name.content.name}}!" },
  },
  {
    // input-required-result-basic-sampling.
    name: "test_input_required_result_sampling",
    description:
      "Asks the client's model a question (sampling, over a multi round-trip), then answers with what it said",
    shape: "direct",
    mrtrRounds: [{ capital_question: sample("What is the capital of France?", 100) }],
    outcome: { kind: "result", text: "The model said: {{inputs.capital_question.content.text}}" },
  },
  {
    // input-required-result-basic-list-roots.
    name: "test_input_required_result_list_roots",
    description: "Asks for the client's roots (over a multi round-trip), then lists them",
    shape: "direct",
    mrtrRounds: [{ client_roots: listRoots }],
    outcome: { kind: "result", text: "Roots: {{inputs.client_roots.roots}}" },
  },
  {
    // input-required-result-request-state: the answer names "state-ok" once the state checked out.
    name: "test_input_required_result_request_state",
    description:
      'Asks to confirm over a multi round-trip and checks the request state it minted ("state-ok")',
    shape: "direct",
    mrtrRounds: [{ confirm: elicit("Please confirm", "ok", "boolean") }],
    outcome: { kind: "result", text: "state-ok" },
  },
  {
    // input-required-result-multiple-input-requests: three kinds of input in one round.
    name: "test_input_required_result_multiple_inputs",
    description: "Asks for a name, a model's greeting and the roots in one round",
    shape: "direct",
    mrtrRounds: [
      {
        user_name: elicit("What is your name?", "name", "string"),
        greeting: sample("Generate a greeting", 50),
        client_roots: listRoots,
      },
    ],
    outcome: { kind: "result", text: "All inputs received" },
  },
  {
    // input-required-result-multi-round: two rounds, a new requestState each.
    name: "test_input_required_result_multi_round",
    description: "Asks a name, then a colour, in two rounds with a new request state each",
    shape: "direct",
    mrtrRounds: [
      { step1: elicit("Step 1: What is your name?", "name", "string") },
      { step2: elicit("Step 2: What is your favorite color?", "color", "string") },
    ],
    outcome: {
      kind: "result",
      text: "{{inputs.step1.content.name}} likes {{inputs.step2.content.color}}",
    },
  },
  {
    // input-required-result-tampered-state: a requestState this server did not mint is -32602.
    name: "test_input_required_result_tampered_state",
    description: "Refuses a request state it did not mint (-32602)",
    shape: "direct",
    mrtrRounds: [{ confirm: elicit("Please confirm", "ok", "boolean") }],
    outcome: { kind: "result", text: "state-ok" },
  },
  {
    // input-required-result-capability-check: only what the client declared is asked for.
    name: "test_input_required_result_capabilities",
    description: "Asks only for the inputs the client declared it can answer",
    shape: "direct",
    undeclaredInputs: "omit",
    mrtrRounds: [
      {
        user_name: elicit("What is your name?", "name", "string"),
        summary: sample("Summarise the request", 50),
      },
    ],
    outcome: { kind: "result", text: "Asked only for what the client can answer" },
  },
]

/**
 * Tools that satisfy the fixtures of the official conformance suite
 * (`@modelcontextprotocol/conformance` 0.2.0-alpha.12): the `tasks-*` scenarios, `server-stateless`,
 * `tools-list`, the `tools-call-*` content, error and progress scenarios, `json-schema-2020-12`,
 * `http-header-validation`, `http-custom-header-server-validation` and the
 * `input-required-result-*` ones. Each tool's comment names the scenario contract it follows.
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
      description: "Answers a fixed text at once",
      shape: "direct",
      outcome: { kind: "result", text: "This is a simple text response for testing." },
    },
    {
      // Sync-only: "Hello, {name}!".
      name: "greet",
      description: 'Answers "Hello, {name}!" at once',
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
      shape: "direct",
      outcome: { kind: "result", text: "Hello, {{args.name|World}}!" },
    },
    {
      // Task-supporting: `seconds` of work, then a result; settles `cancelled` when cancelled.
      name: "slow_compute",
      description:
        'Works `seconds` seconds (default 1), then answers "Computed {label} after {seconds}s"; cancellable',
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
      description: "Works 1 s, then completes with a tool error (isError)",
      taskSupport: "required",
      durationMs: 1000,
      outcome: { kind: "result", text: "The job failed", isError: true },
    },
    {
      // Ends `failed` with a JSON-RPC error inlined.
      name: "protocol_error_job",
      description: "Works 200 ms, then fails with a JSON-RPC error (-32603)",
      taskSupport: "optional",
      durationMs: 200,
      outcome: { kind: "error", code: -32603, message: "Internal error while running the job" },
    },
    {
      // Parks on one elicitation, completes when it is answered.
      name: "confirm_delete",
      description: 'Asks to confirm (field `confirm`) at once, then answers "Deleted {filename}"',
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
      description: "Asks two questions at once; done once both are answered",
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
      description: "Asks a name over a multi round-trip, then greets it from a 200 ms task",
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
      description: "Needs the client's sampling capability (-32021 without it)",
      shape: "direct",
      requiresClientCapabilities: { sampling: {} },
      outcome: { kind: "result", text: "sampled" },
    },
    {
      // server-stateless: the response stream carries only an input_required result, no requests.
      name: "test_streaming_elicitation",
      description: 'Asks to continue over a multi round-trip, then answers "continued"',
      shape: "direct",
      mrtrRounds: [{ answer: confirm("Continue?", "confirm") }],
      outcome: { kind: "result", text: "continued" },
    },
    {
      // server-stateless: must not log without `_meta` logLevel (this server never logs).
      name: "test_logging_tool",
      description: "Would log only when the request asks for a log level; it never logs",
      shape: "direct",
      outcome: { kind: "result", text: "no logs" },
    },
    ...fixtureTools,
  ],
}
