/**
 * The one refresh of a `mcp-handles ui` server: every `every`, each view some open tab watches
 * is read from the store once and its HTML handed to every tab watching it. Ten tabs on one page
 * cost one read a tick, not ten; a view nobody watches is not read at all.
 *
 * @since 0.6.0
 */

import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * @since 0.6.0
 * @category models
 */
export interface Refresh {
  /**
   * The text of view `id`, as `render` makes it: now, then at each tick it changed. Tabs that
   * name the same `id` share one `render` a tick (the first watcher's).
   */
  readonly watch: (id: string, render: Effect.Effect<string>) => Stream.Stream<string>
}

interface View {
  readonly render: Effect.Effect<string>
  readonly updates: PubSub.PubSub<string>
  latest: string | undefined
  watchers: number
}

/**
 * Starts the refresh loop; it stops when the scope closes.
 *
 * @since 0.6.0
 * @category constructors
 */
export const make = (every: Duration.DurationInput): Effect.Effect<Refresh, never, Scope.Scope> =>
  Effect.gen(function* () {
    const views = new Map<string, View>()

    const read = (view: View) =>
      Effect.flatMap(view.render, (text) =>
        text === view.latest
          ? Effect.void
          : Effect.zipRight(
              Effect.sync(() => {
                view.latest = text
              }),
              PubSub.publish(view.updates, text),
            ),
      )

    // One view after another: a tick reads the store once per watched view, never in parallel.
    const tick = Effect.suspend(() =>
      Effect.forEach(
        [...views.values()],
        // A read that dies must not stop the refresh of every other view.
        (view) => read(view).pipe(Effect.catchAllCause(Effect.logError)),
        { discard: true },
      ),
    )
    yield* tick.pipe(Effect.repeat(Schedule.spaced(every)), Effect.forkScoped)

    const join = (id: string, render: Effect.Effect<string>) =>
      Effect.acquireRelease(
        Effect.gen(function* () {
          const found = views.get(id)
          if (found !== undefined) {
            found.watchers++
            return found
          }
          const view: View = {
            render,
            updates: yield* PubSub.sliding<string>(1),
            latest: undefined,
            watchers: 1,
          }
          views.set(id, view)
          return view
        }),
        (view) =>
          Effect.suspend(() => {
            view.watchers--
            if (view.watchers > 0) return Effect.void
            views.delete(id)
            return PubSub.shutdown(view.updates)
          }),
      )

    const watch = (id: string, render: Effect.Effect<string>): Stream.Stream<string> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const view = yield* join(id, render)
          const updates = yield* PubSub.subscribe(view.updates)
          // A view new to the server is read at once; a tab joining a watched one gets its last text.
          if (view.latest === undefined) yield* read(view)
          const first = view.latest
          return Stream.concat(
            first === undefined ? Stream.empty : Stream.make(first),
            Stream.fromQueue(updates),
          ).pipe(Stream.changes)
        }),
      )

    return { watch }
  })
