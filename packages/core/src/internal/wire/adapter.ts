/**
 * What every wire adapter (HTTP, any SDK transport) does the same way around its own exchange:
 * resolving its options against `Wire.defaults`, numbering requests and wrapping them in the
 * envelope, and saying what a request that timed out may have done.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Json from "../../Json.js"
import { type AdapterOptions, defaults, NoAnswer, NotSent } from "../../Wire.js"
import * as Envelope from "./envelope.js"

/** @internal */
export interface Adapter {
  readonly timeout: Duration.Duration
  /** What answers are decoded against: the byte limit of the options, the results' depth limit. */
  readonly limits: Json.JsonLimits
  /** The next request of this wire: a fresh id, `params` inside the envelope. */
  readonly request: (
    method: string,
    params: Json.JsonObject,
    extraMeta?: Json.JsonObject,
  ) => Envelope.RpcRequest
  /**
   * The failure of a request the timeout cut short: in doubt once it may have left (`sent`), not
   * sent otherwise.
   */
  readonly timedOut: (method: string, sent: boolean) => NoAnswer | NotSent
}

/** @internal */
export const make = (options: AdapterOptions): Adapter => {
  const timeout = Duration.decode(options.requestTimeout ?? defaults.requestTimeout)
  const clientInfo = options.clientInfo ?? defaults.clientInfo
  let lastId = 0
  return {
    timeout,
    limits: {
      maxBytes: options.maxAnswerBytes ?? defaults.maxAnswerBytes,
      maxDepth: Json.defaults.resultLimits.maxDepth,
    },
    request: (method, params, extraMeta) => {
      lastId += 1
      return Envelope.request(lastId, method, params, clientInfo, extraMeta, options.clientCapabilities)
    },
    timedOut: (method, sent) => {
      const after = Duration.format(timeout)
      return sent
        ? new NoAnswer({ method, reason: `no answer within ${after}` })
        : new NotSent({ method, reason: `timed out after ${after} before sending` })
    },
  }
}
