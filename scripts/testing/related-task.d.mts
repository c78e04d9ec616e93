/** Types of `related-task.mjs` for the adapters' tests. */
import type * as fc from "fast-check"

export declare const completedWithReference: (metaKey: string) => fc.Arbitrary<{
  readonly taskId: string
  readonly text: string
  /** A Completed outcome, shaped as the wire gives it (cast to the package's Outcome type). */
  readonly outcome: unknown
}>
