/**
 * A TCP proxy in front of PostgreSQL that can lose an answer: armed with a command tag (say
 * `UPDATE 1`), it lets the next statement with that tag run and commit on the server, then
 * cuts the connection before the client sees the reply. That is the ambiguous failure a retry
 * must resolve without reporting a landed write as lost (or a created row as someone else's).
 */
import * as net from "node:net"

export interface FaultyProxy {
  readonly port: number
  /** Loses the reply of the next statement whose CommandComplete carries `tag`. */
  readonly arm: (tag: string) => void
  /** How many replies were lost so far. */
  readonly dropped: () => number
  readonly close: () => Promise<void>
}

/** ReadyForQuery, idle: the implicit transaction of the statement has committed. */
const readyIdle = Buffer.from([0x5a, 0, 0, 0, 5, 0x49])

export const startFaultyProxy = (target: {
  readonly host: string
  readonly port: number
}): Promise<FaultyProxy> =>
  new Promise((resolve, reject) => {
    let armed: Buffer | undefined
    let dropped = 0
    const sockets = new Set<net.Socket>()
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host)
      sockets.add(client).add(upstream)
      let pending = Buffer.alloc(0)
      const kill = () => {
        client.destroy()
        upstream.destroy()
      }
      client.on("close", kill).on("error", kill)
      upstream.on("close", kill).on("error", kill)
      client.on("data", (chunk) => upstream.write(chunk))
      upstream.on("data", (chunk) => {
        if (armed === undefined) {
          client.write(pending.length === 0 ? chunk : Buffer.concat([pending, chunk]))
          pending = Buffer.alloc(0)
          return
        }
        pending = Buffer.concat([pending, chunk])
        const at = pending.indexOf(armed)
        if (at >= 0 && pending.indexOf(readyIdle, at) >= 0) {
          armed = undefined
          dropped++
          kill()
        } else if (at < 0) {
          // Not the armed statement's reply: pass everything up to the last complete
          // ReadyForQuery through, keep the rest until we know.
          const end = pending.lastIndexOf(readyIdle)
          if (end >= 0) {
            client.write(pending.subarray(0, end + readyIdle.length))
            pending = pending.subarray(end + readyIdle.length)
          }
        }
      })
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (typeof address !== "object" || address === null) return reject(new Error("no address"))
      resolve({
        port: address.port,
        arm: (tag) => {
          armed = Buffer.from(`${tag}\0`)
        },
        dropped: () => dropped,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy()
            server.close(() => done())
          }),
      })
    })
  })
