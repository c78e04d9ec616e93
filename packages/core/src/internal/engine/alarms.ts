/**
 * One timer per client for every row a driver of this process waits on. A driver that has
 * nothing to do until its next poll parks: what it waits for is an entry in a heap here, not a
 * sleeping fiber, so an open task costs a few hundred bytes however many are open (B8).
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as LiveClock from "../liveClock.js"

export interface Alarms {
  /** Rings `id` at `at` on the client's clock (replacing an alarm already set for it). */
  readonly set: (id: string, at: number) => void
  /** Whether `id` had an alarm set; it has none afterwards. */
  readonly clear: (id: string) => boolean
  /** Rings every alarm as it falls due, with `ring(id)`, until interrupted. */
  readonly run: (ring: (id: string) => Effect.Effect<void>) => Effect.Effect<never>
}

interface Entry {
  readonly at: number
  readonly id: string
  readonly generation: number
}

/** A binary min-heap on `at`; entries made stale by `set` or `clear` are skipped when popped. */
const makeHeap = () => {
  const items: Array<Entry> = []
  const before = (i: number, j: number) => (items[i] as Entry).at < (items[j] as Entry).at
  const swap = (i: number, j: number) => {
    const t = items[i] as Entry
    items[i] = items[j] as Entry
    items[j] = t
  }
  return {
    peek: (): Entry | undefined => items[0],
    push: (entry: Entry) => {
      items.push(entry)
      for (let i = items.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1
        if (!before(i, parent)) break
        swap(i, parent)
        i = parent
      }
    },
    pop: (): Entry | undefined => {
      const top = items[0]
      const last = items.pop()
      if (items.length > 0 && last !== undefined) {
        items[0] = last
        for (let i = 0; ; ) {
          const left = 2 * i + 1
          const right = left + 1
          let least = i
          if (left < items.length && before(left, least)) least = left
          if (right < items.length && before(right, least)) least = right
          if (least === i) break
          swap(i, least)
          i = least
        }
      }
      return top
    },
  }
}

export const make = (): Alarms => {
  const heap = makeHeap()
  const live = new Map<string, number>()
  let generation = 0
  // An alarm was set sooner than the one the runner sleeps towards: the runner's wait ends. On
  // the live clock the wait is a plain timer ended by `wake`; under another clock, a race of
  // `sooner` against Effect's sleep (see LiveClock for why not always the race).
  let sooner = Deferred.unsafeMake<void>(FiberId.none)
  let soonerSet = false
  let wake: (() => void) | undefined
  let sleepingUntil = Number.POSITIVE_INFINITY

  const set = (id: string, at: number) => {
    generation += 1
    live.set(id, generation)
    heap.push({ at, id, generation })
    if (at < sleepingUntil) {
      soonerSet = true
      Deferred.unsafeDone(sooner, Effect.void)
      wake?.()
    }
  }

  /** Waits `ms` (forever when undefined), or until an alarm is set sooner. */
  const sleep = (ms: number | undefined): Effect.Effect<void> =>
    Effect.clockWith((clock) => {
      if (clock !== LiveClock.liveClock || (ms !== undefined && !LiveClock.timerFits(ms))) {
        const wait = Deferred.await(sooner)
        return ms === undefined ? wait : Effect.race(wait, Effect.sleep(Duration.millis(ms)))
      }
      return Effect.async<void>((resume) => {
        if (soonerSet) return resume(Effect.void)
        let timer: ReturnType<typeof setTimeout> | undefined
        const end = () => {
          wake = undefined
          if (timer !== undefined) clearTimeout(timer)
        }
        wake = () => {
          end()
          resume(Effect.void)
        }
        if (ms !== undefined) timer = setTimeout(wake, ms)
        return Effect.sync(end)
      })
    })

  const clear = (id: string) => live.delete(id)

  const run = (ring: (id: string) => Effect.Effect<void>) =>
    Effect.forever(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (let next = heap.peek(); next !== undefined && next.at <= now; next = heap.peek()) {
          heap.pop()
          if (live.get(next.id) !== next.generation) continue
          live.delete(next.id)
          yield* ring(next.id)
        }
        const next = heap.peek()
        sooner = Deferred.unsafeMake<void>(FiberId.none)
        soonerSet = false
        sleepingUntil = next?.at ?? Number.POSITIVE_INFINITY
        // Whole milliseconds: times may be fractional (jittered backoffs), and a wait smaller
        // than the clock can add to its time would never move a virtual clock past the alarm.
        yield* sleep(next === undefined ? undefined : Math.max(1, Math.ceil(next.at - now)))
        sleepingUntil = Number.NEGATIVE_INFINITY
      }),
    )

  return { set, clear, run }
}
