import * as Otlp from "@effect/opentelemetry/Otlp"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Redaction from "@mcp-handles/core/Redaction"
import * as Telemetry from "@mcp-handles/core/Telemetry"
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import type * as MetricState from "effect/MetricState"
import { makeHarness, runFor, startProcess } from "./support/harness.js"
import { otel } from "./support/otel.js"

/** A task that runs `durationMs` and asks to be polled every second. */
const slow = (durationMs: number) => ({
  name: "slow",
  shape: "task" as const,
  durationMs,
  pollIntervalMs: 1_000,
  outcome: { kind: "result" as const, text: "done" },
})

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

const counterValue = (metric: Metric.Metric.Counter<number>) =>
  Effect.map(Metric.value(metric), (state: MetricState.MetricState.Counter<number>) => state.count)

describe("Telemetry", () => {
  it.effect("one durable call's spans, from callTool to its end, in one tree without a raw task id", () => {
    const exporter = new InMemorySpanExporter()
    return Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [slow(3_000)],
      })
      // The polls' spans are traced: no stream stands in for them.
      const p = yield* startProcess(h, { background: false, push: false })
      const okPolls = Metric.tagged(Telemetry.polls, "outcome", "ok")
      const pollsBefore = yield* counterValue(okPolls)
      const handle = yield* runFor(p.client.callTool("fake", "slow", { n: 1 }, { key: "k1" }), 1_000)
      const taskId = handle.record.taskId
      expect(taskId).not.toBeNull()
      const outcome = yield* runFor(handle.outcome, 10_000)
      expect(outcome._tag).toBe("Completed")
      yield* p.close

      const spans = exporter.getFinishedSpans()
      const roots = spans.filter((span) => span.name === Telemetry.spans.callTool)
      expect(roots).toHaveLength(1)
      const root = roots[0] as ReadableSpan
      expect(root.attributes).toMatchObject({
        [Telemetry.attributes.serverName]: "fake",
        [Telemetry.attributes.tool]: "slow",
        [Telemetry.attributes.key]: "k1",
        [Telemetry.attributes.scope]: "default",
        [Telemetry.attributes.launched]: true,
      })
      const rootId = root.spanContext().spanId
      const trace = root.spanContext().traceId
      const ofCall = spans.filter((span) => span.spanContext().traceId === trace)

      const insertServerId = spans.find((span) => span.name === `${Telemetry.spans.storePrefix}insertOrGet`)
        ?.attributes[Telemetry.attributes.serverId]
      expect(insertServerId).toMatch(/^fake:/)

      // The request that launched the call, under the call.
      const call = ofCall.filter((span) => span.name === "tools/call")
      expect(call).toHaveLength(1)
      expect(parentOf(call[0] as ReadableSpan)).toBe(rootId)
      expect((call[0] as ReadableSpan).attributes).toMatchObject({
        [Telemetry.attributes.method]: "tools/call",
        [Telemetry.attributes.tool]: "slow",
        [Telemetry.attributes.serverName]: "fake",
        [Telemetry.attributes.serverId]: insertServerId,
        [Telemetry.attributes.outcome]: "ok",
        [Telemetry.attributes.taskId]: Redaction.taskId(taskId as string),
        [Telemetry.attributes.status]: "working",
      })

      // The write-ahead intent and the writes that followed, under the call.
      const writes = ofCall.filter((span) => span.name.startsWith(Telemetry.spans.storePrefix))
      const insert = writes.find((span) => span.name === `${Telemetry.spans.storePrefix}insertOrGet`)
      expect(insert && parentOf(insert)).toBe(rootId)
      expect(insert?.attributes[Telemetry.attributes.operation]).toBe("insertOrGet")
      expect(writes.every((span) => parentOf(span) === rootId)).toBe(true)
      const statuses = writes
        .filter((span) => span.name === `${Telemetry.spans.storePrefix}update`)
        .map((span) => span.attributes[Telemetry.attributes.status])
      expect(statuses).toContain("working")
      expect(statuses.at(-1)).toBe("completed")

      // The polls, every one of them in the call's tree (also those resumed by an alarm).
      const polls = spans.filter((span) => span.name === "tasks/get")
      expect(polls.length).toBeGreaterThanOrEqual(2)
      for (const poll of polls) {
        expect(poll.spanContext().traceId).toBe(trace)
        expect(parentOf(poll)).toBe(rootId)
        expect(poll.attributes).toMatchObject({
          [Telemetry.attributes.method]: "tasks/get",
          [Telemetry.attributes.outcome]: "ok",
          [Telemetry.attributes.taskId]: Redaction.taskId(taskId as string),
        })
      }
      expect(polls.at(-1)?.attributes[Telemetry.attributes.status]).toBe("completed")
      expect(Math.min(...polls.map((span) => span.startTime[0] * 1e9 + span.startTime[1]))).toBeGreaterThan(
        (call[0] as ReadableSpan).startTime[0] * 1e9 + (call[0] as ReadableSpan).startTime[1],
      )

      // No raw task id anywhere: not in a name, not in an attribute, not in an event.
      const dump = JSON.stringify(
        spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })),
      )
      expect(dump).not.toContain(taskId as string)

      expect((yield* counterValue(okPolls)) - pollsBefore).toBe(polls.length)
    }).pipe(Effect.provide(otel(exporter)))
  })

  it.effect("a JSON-RPC error answer is the outcome class of its request span", () => {
    const exporter = new InMemorySpanExporter()
    return Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [{ name: "echo", shape: "direct", outcome: { kind: "result", text: "hi" } }],
      })
      const p = yield* startProcess(h, { background: false })
      const handle = yield* runFor(p.client.callTool("fake", "nope", {}, { key: "k2" }), 1_000)
      yield* runFor(handle.outcome, 1_000)
      yield* p.close
      const call = exporter.getFinishedSpans().find((span) => span.name === "tools/call")
      expect(call?.attributes[Telemetry.attributes.outcome]).toBe("RpcErrorAnswer")
    }).pipe(Effect.provide(otel(exporter)))
  })

  it.effect("a lost answer is NoAnswer on its request span, and one transition into doubt", () => {
    const exporter = new InMemorySpanExporter()
    return Effect.gen(function* () {
      const h = yield* makeHarness({
        tools: [slow(2_000)],
        deduplicateByKey: true,
        faults: [{ when: { method: "tools/call", nth: 1 }, fault: { kind: "drop", phase: "after" } }],
      })
      const p = yield* startProcess(h, { background: false })
      const before = yield* counterValue(Telemetry.inDoubt)
      const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "lost" }), 1_000)
      expect(handle.record.status).toBe("in_doubt")
      const again = yield* runFor(p.client.reissue("lost"), 1_000)
      expect((yield* runFor(again.outcome, 20_000))._tag).toBe("Completed")
      yield* p.close
      expect((yield* counterValue(Telemetry.inDoubt)) - before).toBe(1)
      const outcomes = exporter
        .getFinishedSpans()
        .filter((span) => span.name === "tools/call")
        .map((span) => span.attributes[Telemetry.attributes.outcome])
      expect(outcomes).toEqual(["NoAnswer", "ok"])
    }).pipe(Effect.provide(otel(exporter)))
  })

  it.effect("the README's OTLP wiring exports the call's spans and the metrics", () => {
    const sent: Array<{ readonly path: string; readonly body: string }> = []
    // A collector in process: what the README's FetchHttpClient would POST, kept here.
    const collector = HttpClient.make((request, url) =>
      Effect.sync(() => {
        const body = request.body
        sent.push({
          path: url.pathname,
          body: body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : JSON.stringify(body),
        })
        return HttpClientResponse.fromWeb(
          request,
          new Response("{}", { status: 200, headers: { "content-type": "application/json" } }),
        )
      }),
    )
    const telemetry = Otlp.layerJson({
      baseUrl: "http://collector.test:4318",
      resource: { serviceName: "mcp-handles-test" },
    }).pipe(Layer.provide(Layer.succeed(HttpClient.HttpClient, collector)))
    return Effect.gen(function* () {
      yield* Effect.gen(function* () {
        const h = yield* makeHarness({
          tools: [slow(2_000)],
        })
        // A poll's span is among those exported: no stream stands in for the polls.
        const p = yield* startProcess(h, { background: false, push: false })
        const handle = yield* runFor(p.client.callTool("fake", "slow", {}, { key: "k3" }), 1_000)
        yield* runFor(handle.outcome, 10_000)
        yield* p.close
      }).pipe(Effect.provide(telemetry))
      const traces = sent.filter((request) => request.path === "/v1/traces").map((request) => request.body)
      const metrics = sent.filter((request) => request.path === "/v1/metrics").map((request) => request.body)
      expect(traces.join("")).toContain(Telemetry.spans.callTool)
      expect(traces.join("")).toContain("tasks/get")
      expect(metrics.join("")).toContain("mcp_handles_polls_total")
    })
  })
})
