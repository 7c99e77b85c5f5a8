/**
 * A local fake venue websocket (the `ws` package's `WebSocketServer`, tests only) on 127.0.0.1, port 0, for the
 * liquidation-stream tests: it records every frame a client sends, answers through a handler the test can swap
 * at any time, and lets the test push frames to, ping, or drop every connected client.
 */
import { Effect, type Scope } from "effect"
import { type WebSocket, WebSocketServer } from "ws"

export interface FakeWsServer {
  /** `ws://127.0.0.1:<port>` */
  readonly url: string
  /** Every connection so far, with the path it asked for. */
  readonly connections: Array<{ readonly path: string; readonly socket: WebSocket }>
  /** Every text frame received, parsed when it is JSON. */
  readonly received: Array<unknown>
  /** Pong frames received (answers to `pingAll`). */
  readonly pongs: { count: number }
  /** The answer(s) to a client frame (none: undefined or []). */
  setHandler(handler: (frame: unknown) => ReadonlyArray<unknown> | unknown | undefined): void
  /** Sends a frame (a value as JSON, a string as it is) to every open connection. */
  broadcast(frame: unknown): void
  /** Sends a websocket ping frame to every open connection. */
  pingAll(): void
  /** Cuts every connection without a close handshake. */
  dropAll(): void
  /** While on, every new connection is cut as soon as it is accepted (a venue that is down). */
  setDown(on: boolean): void
  /** Open connections now. */
  open(): number
}

export const fakeWsServer = (
  initial: (frame: unknown) => ReadonlyArray<unknown> | unknown | undefined
): Effect.Effect<FakeWsServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<FakeWsServer & { close: () => Promise<void> }>((resolve) => {
          let handler = initial
          const connections: FakeWsServer["connections"] = []
          const received: Array<unknown> = []
          const pongs = { count: 0 }
          const send = (socket: WebSocket, frame: unknown) =>
            socket.send(typeof frame === "string" ? frame : JSON.stringify(frame))
          const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
          let down = false
          server.on("connection", (socket, request) => {
            connections.push({ path: request.url ?? "/", socket })
            if (down) {
              socket.terminate()
              return
            }
            socket.on("pong", () => {
              pongs.count++
            })
            socket.on("message", (data) => {
              const text = data.toString()
              let frame: unknown = text
              try {
                frame = JSON.parse(text)
              } catch {
                // Kept as text.
              }
              received.push(frame)
              const answer = handler(frame)
              if (answer === undefined) return
              for (const a of Array.isArray(answer) ? answer : [answer]) send(socket, a)
            })
          })
          server.on("listening", () => {
            const address = server.address()
            const port = typeof address === "object" && address !== null ? address.port : 0
            const live = () => connections.filter((c) => c.socket.readyState === 1)
            resolve({
              url: `ws://127.0.0.1:${port}`,
              connections,
              received,
              pongs,
              setHandler: (h) => {
                handler = h
              },
              broadcast: (frame) => {
                for (const c of live()) send(c.socket, frame)
              },
              pingAll: () => {
                for (const c of live()) c.socket.ping()
              },
              dropAll: () => {
                for (const c of live()) c.socket.terminate()
              },
              setDown: (on) => {
                down = on
              },
              open: () => live().length,
              close: () =>
                new Promise<void>((done) => {
                  for (const c of connections) c.socket.terminate()
                  server.close(() => done())
                })
            })
          })
        })
    ),
    (s) => Effect.promise(() => s.close())
  )
