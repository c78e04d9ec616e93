/**
 * What the client tells the application's log about a call that needs someone, in words that
 * say what to do. Each line carries the annotation `notice`, so that a front end which says the
 * same in its own words (the CLI) can leave the library's line out.
 */
import * as Effect from "effect/Effect"
import type * as HandleRecord from "../../HandleRecord.js"

/** The troubleshooting page's section on calls in doubt (the docs' link check reads it here). */
export const inDoubtSection = "docs/troubleshooting.md#a-call-is-in-doubt"

/**
 * An in-doubt call is never sent again by itself: without this line an application that meets
 * one sees only its outcome's tag, and nothing says how to decide it.
 */
export const inDoubt = (record: HandleRecord.HandleRecord) => {
  const key = JSON.stringify(record.key)
  return Effect.logWarning(
    `${record.key} is in doubt: the server may or may not have run it, so it is not sent again by itself; decide with client.reissue(${key}) to send it again or client.abandon(${key}) to give it up (from a shell: mcp-handles reissue ${record.key}); see ${inDoubtSection}`,
    { key: record.key, reason: record.lastProblem },
  ).pipe(Effect.annotateLogs("notice", "in_doubt"))
}
