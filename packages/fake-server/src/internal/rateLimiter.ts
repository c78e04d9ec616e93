import type { RateLimit } from "../Config.js"

/** Fixed-window request counting on the server's clock (so virtual time drives it too). */
export interface RateLimiter {
  /** `undefined` when allowed; otherwise the `Retry-After` in seconds. */
  take(bucket: string, limit: RateLimit, now: number): number | undefined
}

export const makeRateLimiter = (): RateLimiter => {
  const windows = new Map<string, { start: number; count: number }>()
  return {
    take: (bucket, limit, now) => {
      const start = Math.floor(now / limit.windowMs) * limit.windowMs
      const window = windows.get(bucket)
      if (window === undefined || window.start !== start) {
        windows.set(bucket, { start, count: 1 })
        return limit.max >= 1 ? undefined : retryAfter(limit, start, now)
      }
      window.count += 1
      return window.count <= limit.max ? undefined : retryAfter(limit, start, now)
    },
  }
}

const retryAfter = (limit: RateLimit, start: number, now: number): number =>
  limit.retryAfterSeconds ?? Math.max(1, Math.ceil((start + limit.windowMs - now) / 1000))
