import type { RateLimitConfig } from "../config.js"

/** Fixed-window request counting on the server's clock (so virtual time drives it too). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  /** `undefined` when allowed; otherwise the `Retry-After` in seconds. */
  take(bucket: string, limit: RateLimitConfig, now: number): number | undefined {
    const start = Math.floor(now / limit.windowMs) * limit.windowMs
    const window = this.windows.get(bucket)
    if (window === undefined || window.start !== start) {
      this.windows.set(bucket, { start, count: 1 })
      return limit.max >= 1 ? undefined : retryAfter(limit, start, now)
    }
    window.count += 1
    return window.count <= limit.max ? undefined : retryAfter(limit, start, now)
  }
}

const retryAfter = (limit: RateLimitConfig, start: number, now: number): number =>
  limit.retryAfterSeconds ?? Math.max(1, Math.ceil((start + limit.windowMs - now) / 1000))
