/** Effect's tracer, backed by an OpenTelemetry SDK that keeps finished spans in memory. */
import * as OtelResource from "@effect/opentelemetry/Resource"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import {
  BasicTracerProvider,
  type InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base"
import * as Layer from "effect/Layer"

export const otel = (exporter: InMemorySpanExporter) =>
  OtelTracer.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        OtelResource.layer({ serviceName: "mcp-handles-test" }),
        Layer.succeed(
          OtelTracer.OtelTracerProvider,
          new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
        ),
      ),
    ),
  )
