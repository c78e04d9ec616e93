/**
 * The client's public types are written out as plain data, so that its declarations name no
 * Effect (an app on Effect 4 would resolve Effect 4's types). These checks hold them to core's:
 * a field added, renamed or retyped in core fails the type check (`pnpm typecheck`) until the
 * client's declaration follows. What the client returns must be core's type, field for field;
 * what it takes must offer core's options (its durations are the subset of core's that needs no
 * Effect, checked where `openTaskClient` hands them on).
 */
import type * as Core from "@mcp-handles/core"
import type * as CoreStore from "@mcp-handles/core/HandleStore"
import type { PgStore } from "@mcp-handles/store-postgres"
import type { SqliteStore } from "@mcp-handles/store-sqlite"
import { describe, expectTypeOf, it } from "vitest"
import type * as Client from "../src/index.js"

/** The compiler's identity of two types. */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

/** Each type assignable to the other. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/**
 * A type as its structure (core's models are classes, the client's interfaces), down to JSON
 * objects and arrays, which both declare alike (checked below) and whose recursion the compiler
 * would not finish comparing.
 */
type Plain<T> = T extends (...args: never) => unknown
  ? T
  : [Client.JsonObject] extends [T]
    ? T
    : [ReadonlyArray<Client.JsonValue>] extends [T]
      ? T
      : T extends object
        ? { [K in keyof T]: Plain<T[K]> }
        : T

/** The fields on which A and B differ, so that a failure names them; `never` when none. */
type Differing<A, B> = {
  [K in keyof A | keyof B]: K extends keyof A
    ? K extends keyof B
      ? Equals<Plain<A[K]>, Plain<B[K]>> extends true
        ? never
        : K
      : K
    : K
}[keyof A | keyof B]

/** Compiles when `D` is `never`; otherwise the error names what differs. */
const none = <_D extends never>(): void => undefined

/** Compiles when `T` is `true`. */
const holds = <_T extends true>(): void => undefined

/** The same option names: one added to core must be offered here too. */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>]

describe("the client's types are core's", () => {
  it("for what it returns", () => {
    // (Field by field, the record is more than the compiler will compare: whole, then.)
    holds<Equals<Plain<Client.HandleRecord>, Plain<Core.HandleRecord.HandleRecord>>>()
    none<Differing<Client.ListPage, CoreStore.ListPage>>()
    none<Differing<Client.GcReport, CoreStore.GcReport>>()
    none<Differing<Client.ReconcileReport, Core.TaskClient.ReconcileReport>>()
    none<Differing<Client.InputRequest, Core.TaskClient.InputRequest>>()
    none<Differing<Omit<Client.Delivered, "ack">, Omit<Core.PromiseClient.PromiseDelivered, "ack">>>()
    none<Differing<Omit<Client.Handle, "outcome">, Omit<Core.PromiseClient.PromiseHandle, "outcome">>>()
    holds<Equals<Plain<Client.Outcome>, Plain<Core.Outcome.Outcome>>>()
    holds<Equals<Plain<Client.ClientEvent>, Plain<Core.TaskClient.ClientEvent>>>()
    holds<Equals<Client.Status, Core.HandleRecord.Status>>()
    holds<Equals<Client.JsonValue, Core.Json.JsonValue>>()
    holds<Equals<Client.JsonObject, Core.Json.JsonObject>>()
    holds<Equals<Client.JsonInput, Core.Json.JsonInput>>()
    holds<Mutual<Client.SerializedTaskReference, Core.TaskReference.SerializedTaskReference>>()
    holds<Equals<Client.ToolInfo, Core.Wire.ToolInfo>>()
  })

  it("for the client: the same operations, and core's client is one", () => {
    expectTypeOf<SameKeys<Client.TaskClient, Core.PromiseClient.PromiseTaskClient>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<Core.PromiseClient.PromiseTaskClient>().toMatchTypeOf<Client.TaskClient>()
  })

  it("for what it takes", () => {
    expectTypeOf<SameKeys<Client.OpenOptions, Core.PromiseClient.OpenOptions>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<Client.HttpOptions, Core.HttpWire.Options>>().toEqualTypeOf<[never, never]>()
    none<Differing<Client.PollingOptions, Core.Polling.Options>>()
    expectTypeOf<
      SameKeys<Client.CallOptions, Omit<Core.TaskClient.CallOptions, "onInputRequired">>
    >().toEqualTypeOf<[never, never]>()
    expectTypeOf<SameKeys<Client.OutcomesOptions, Core.PromiseClient.PromiseOutcomesOptions>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<Client.GcOptions, Core.TaskClient.GcOptions>>().toEqualTypeOf<[never, never]>()
    expectTypeOf<SameKeys<Client.EventsOptions, Core.TaskClient.EventsOptions>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<Client.AdoptOptions, Core.TaskReference.AdoptOptions>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<Omit<Client.SqliteStore, "kind">, SqliteStore.Options>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<Omit<Client.PostgresStore, "kind" | "url">, PgStore.UrlOptions>>().toEqualTypeOf<
      [never, never]
    >()
    expectTypeOf<SameKeys<NonNullable<Client.PostgresStore["retry"]>, PgStore.RetryOptions>>().toEqualTypeOf<
      [never, never]
    >()
  })
})
