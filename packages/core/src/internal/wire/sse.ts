/**
 * A minimal, incremental reader of `text/event-stream` bodies that keeps the raw `data` of each
 * message event. The SDK transport frames SSE for us, but it hands over objects it already
 * parsed (and its parser silently drops `__proto__` keys), so the wire keeps its own copy of the
 * raw text to validate. Follows the WHATWG event-stream rules for the fields we need.
 *
 * @internal
 */

/** @internal */
export interface SseReader {
  /** Feeds decoded text; returns nothing, events are collected in `events`. */
  readonly push: (text: string) => void
  /** End of stream: an event not terminated by a blank line is discarded, as in EventSource. */
  readonly end: () => void
  /** The `data` of each message event (no `event:` field, or `event: message`), in order. */
  readonly events: Array<string>
}

/** @internal */
export const makeSseReader = (): SseReader => {
  const events: Array<string> = []
  let buffer = ""
  let data: Array<string> = []
  let eventType = ""

  const dispatch = () => {
    if (data.length > 0 && (eventType === "" || eventType === "message")) events.push(data.join("\n"))
    data = []
    eventType = ""
  }

  const line = (text: string) => {
    if (text === "") return dispatch()
    if (text.startsWith(":")) return
    const colon = text.indexOf(":")
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? "" : text.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "data") data.push(value)
    else if (field === "event") eventType = value
  }

  const drain = (final: boolean) => {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer)
      if (match === null) break
      // A lone CR at the very end may be the first half of a CRLF split across chunks.
      if (!final && match[0] === "\r" && match.index === buffer.length - 1) break
      line(buffer.slice(0, match.index))
      buffer = buffer.slice(match.index + match[0].length)
    }
  }

  return {
    events,
    push: (text) => {
      buffer += text
      drain(false)
    },
    end: () => {
      drain(true)
      buffer = ""
      data = []
    },
  }
}
