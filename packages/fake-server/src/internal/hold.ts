/**
 * Waiting out a held answer: the tool's work takes its time on the server's `sleep` (a virtual
 * clock's in tests), and the wait is cut when the client goes away or the server restarts.
 */

/** Waits `ms` on `sleep`: true once it passed, false as soon as one of `cuts` aborts. */
export const hold = (
  sleep: (ms: number) => Promise<void>,
  ms: number,
  cuts: readonly AbortSignal[],
): Promise<boolean> => {
  if (cuts.some((signal) => signal.aborted)) return Promise.resolve(false)
  if (ms <= 0) return Promise.resolve(true)
  return new Promise<boolean>((resolve) => {
    const cut = () => settle(false)
    const settle = (passed: boolean) => {
      for (const signal of cuts) signal.removeEventListener("abort", cut)
      resolve(passed)
    }
    for (const signal of cuts) signal.addEventListener("abort", cut, { once: true })
    sleep(ms).then(
      () => settle(true),
      () => settle(false),
    )
  })
}

/** Whether the client takes an event stream (no `Accept` at all takes anything). */
export const acceptsEventStream = (headers: Headers): boolean => {
  const accept = headers.get("accept")
  return accept === null || /text\/event-stream|\*\/\*/i.test(accept)
}
