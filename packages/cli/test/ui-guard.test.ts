/**
 * The UI's guard on its own: which requests pass, by Host, Origin, Sec-Fetch-Site, cookie and
 * token (the browser test proves the same through a real server and Chromium).
 */
import { describe, expect, it } from "vitest"
import * as Guard from "../src/ui/Guard.js"

const secret = "s3cret-token-value"
const hosts = Guard.allowedHosts("127.0.0.1", 4000)
const base: Guard.Request = {
  method: "GET",
  host: "127.0.0.1:4000",
  origin: undefined,
  fetchSite: undefined,
  cookie: secret,
  queryToken: undefined,
}

describe("Guard.check", () => {
  it("lets the cookie's holder read, under a loopback name of this port", () => {
    for (const host of ["127.0.0.1:4000", "localhost:4000", "[::1]:4000", "LOCALHOST:4000"]) {
      expect(Guard.check({ ...base, host }, secret, hosts)._tag, host).toBe("Allow")
    }
  })

  it("refuses another Host, another port, or none (DNS rebinding)", () => {
    for (const host of ["evil.example:4000", "127.0.0.1:4001", "127.0.0.1", undefined]) {
      expect(Guard.check({ ...base, host }, secret, hosts), String(host)).toMatchObject({
        _tag: "Refuse",
        status: 403,
      })
    }
  })

  it("takes the token from the URL only on a GET, to set the cookie", () => {
    const first = { ...base, cookie: undefined, queryToken: secret }
    expect(Guard.check(first, secret, hosts)._tag).toBe("AllowAndRemember")
    expect(Guard.check({ ...first, queryToken: "s3cret-token-valuf" }, secret, hosts)).toMatchObject({
      status: 401,
    })
    expect(Guard.check({ ...base, cookie: "short" }, secret, hosts)).toMatchObject({ status: 401 })
    expect(
      Guard.check({ ...first, method: "POST", origin: "http://127.0.0.1:4000" }, secret, hosts),
    ).toMatchObject({ status: 401 })
  })

  it("lets an action through only from this server's own origin", () => {
    const post = { ...base, method: "POST", origin: "http://127.0.0.1:4000", fetchSite: "same-origin" }
    expect(Guard.check(post, secret, hosts)._tag).toBe("Allow")
    for (const change of [
      { origin: undefined },
      { origin: "null" },
      { origin: "http://evil.example" },
      { origin: "http://localhost:4000" },
      { fetchSite: "cross-site" },
      { fetchSite: "same-site" },
    ]) {
      expect(Guard.check({ ...post, ...change }, secret, hosts), JSON.stringify(change)).toMatchObject({
        _tag: "Refuse",
        status: 403,
      })
    }
  })

  it("answers to the host it was told to bind, bracketing an IPv6 address", () => {
    expect(Guard.allowedHosts("::1", 80).has("[::1]:80")).toBe(true)
    expect(Guard.allowedHosts("ops.internal", 80).has("ops.internal:80")).toBe(true)
  })
})
