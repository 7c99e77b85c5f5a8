/**
 * What the replay venues of Bybit, OKX and Hyperliquid share: a REST server (`node:http`) and a websocket server
 * (the `ws` package's `WebSocketServer`) on 127.0.0.1, each on a port of its own, the open connections with their
 * subscriptions, the frames sent by kind, and the controls the tests and benches use (`dropStreams`: every
 * connection cut without a close handshake; `refuseConnections`: new ones refused with 503 too). Each venue module
 * speaks its own protocol over it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { type WebSocket, WebSocketServer } from "ws"

export interface Conn {
  /** The connection's number, in the order they came (from 1). */
  readonly id: number
  readonly socket: WebSocket
  readonly path: string
  readonly topics: Set<string>
  /** Incoming message times in the venue's rate window. */
  incoming: Array<number>
}

export interface RestRequest {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  /** The parsed JSON body of a POST (undefined when none or not JSON). */
  readonly body: unknown
}

export interface RestAnswer {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export interface RestLogEntry {
  readonly t: number
  /** The path, or for a POST /info its `type` (`info:candleSnapshot`). */
  readonly what: string
  readonly symbol: string | undefined
  readonly status: number
}

export interface WsStats {
  connects: number
  refused: number
  framesSent: number
  requests: number
  errorsAnswered: number
  rateViolations: number
  /** Frames sent by kind (`book`, `kline`, `mark`, `funding`, ...). */
  readonly byKind: Record<string, number>
}

export interface VenueServers {
  readonly restUrl: string
  readonly wsUrl: string
  readonly conns: Set<Conn>
  readonly subscribers: Map<string, Set<Conn>>
  readonly stats: WsStats
  /** Sends a frame of `kind` on a connection (when open), counted. */
  readonly send: (c: Conn, text: string, kind: string) => void
  readonly subscribe: (c: Conn, topic: string) => void
  readonly unsubscribe: (c: Conn, topic: string) => void
  readonly dropStreams: () => void
  readonly refuseConnections: (on: boolean) => void
  readonly rest: {
    readonly byPath: () => Readonly<Record<string, number>>
    readonly log: ReadonlyArray<RestLogEntry>
  }
  readonly close: () => Promise<void>
}

export const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

export const startVenueServers = async (venue: {
  /** Websocket paths served. */
  readonly wsPaths: ReadonlyArray<string>
  /** Whether a new connection is taken (false: 429, as a venue past its connection rate). */
  readonly admit?: (path: string) => boolean
  readonly onConnect?: (c: Conn) => void
  readonly onMessage: (c: Conn, text: string) => void
  readonly onClose?: (c: Conn) => void
  readonly rest: (request: RestRequest, nowMs: number) => RestAnswer
  /** What a REST request is logged as, and its symbol. */
  readonly describe: (request: RestRequest) => { readonly what: string; readonly symbol: string | undefined }
}): Promise<VenueServers> => {
  const conns = new Set<Conn>()
  const subscribers = new Map<string, Set<Conn>>()
  const stats: WsStats = {
    connects: 0,
    refused: 0,
    framesSent: 0,
    requests: 0,
    errorsAnswered: 0,
    rateViolations: 0,
    byKind: {}
  }
  let refusing = false
  const send = (c: Conn, text: string, kind: string) => {
    if (c.socket.readyState !== 1) return
    c.socket.send(text)
    stats.framesSent++
    stats.byKind[kind] = (stats.byKind[kind] ?? 0) + 1
  }
  const subscribe = (c: Conn, topic: string) => {
    c.topics.add(topic)
    let set = subscribers.get(topic)
    if (set === undefined) {
      set = new Set()
      subscribers.set(topic, set)
    }
    set.add(c)
  }
  const unsubscribe = (c: Conn, topic: string) => {
    c.topics.delete(topic)
    subscribers.get(topic)?.delete(c)
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 })
  const wsHttp = createServer((_req, res) => {
    res.writeHead(404, { "Content-Type": "text/plain" })
    res.end("websocket endpoints only")
  })
  const wsSockets = new Set<Socket>()
  wsHttp.on("connection", (s) => {
    wsSockets.add(s)
    s.on("close", () => wsSockets.delete(s))
  })
  wsHttp.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    const status = refusing
      ? "503 Service Unavailable"
      : !venue.wsPaths.includes(path)
        ? "404 Not Found"
        : venue.admit !== undefined && !venue.admit(path)
          ? "429 Too Many Requests"
          : undefined
    if (status !== undefined) {
      stats.refused++
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      stats.connects++
      const c: Conn = { id: stats.connects, socket: ws, path, topics: new Set(), incoming: [] }
      conns.add(c)
      ws.on("message", (data, isBinary) => {
        if (c.socket.readyState !== 1) return
        stats.requests++
        venue.onMessage(c, isBinary ? "" : data.toString())
      })
      const drop = () => {
        if (!conns.delete(c)) return
        // The venue sees the connection as it was (Hyperliquid's per-IP count releases its topics), then they go.
        venue.onClose?.(c)
        for (const t of [...c.topics]) unsubscribe(c, t)
      }
      ws.on("close", drop)
      ws.on("error", drop)
      venue.onConnect?.(c)
    })
  })

  const byPath: Record<string, number> = {}
  const log: Array<RestLogEntry> = []
  const onRest = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const nowMs = Date.now()
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    let body: unknown
    if (raw !== "") {
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
    }
    const request: RestRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, body }
    const { what, symbol } = venue.describe(request)
    byPath[what] = (byPath[what] ?? 0) + 1
    const a = venue.rest(request, nowMs)
    log.push({ t: nowMs, what, symbol, status: a.status })
    res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers })
    res.end(JSON.stringify(a.body))
  }
  const restServer = createServer((req, res) => {
    let raw = ""
    req.setEncoding("utf8")
    req.on("data", (d: string) => {
      raw += d
    })
    req.on("end", () => onRest(req, res, raw))
  })
  const restSockets = new Set<Socket>()
  restServer.on("connection", (s) => {
    restSockets.add(s)
    s.on("close", () => restSockets.delete(s))
  })
  const [restPort, wsPort] = await Promise.all([listen(restServer), listen(wsHttp)])

  return {
    restUrl: `http://127.0.0.1:${restPort}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    conns,
    subscribers,
    stats,
    send,
    subscribe,
    unsubscribe,
    dropStreams: () => {
      for (const c of conns) c.socket.terminate()
    },
    refuseConnections: (on) => {
      refusing = on
      if (on) for (const c of conns) c.socket.terminate()
    },
    rest: { byPath: () => byPath, log },
    close: async () => {
      for (const c of conns) c.socket.terminate()
      for (const s of restSockets) s.destroy()
      for (const s of wsSockets) s.destroy()
      await new Promise<void>((r) => wss.close(() => r()))
      await Promise.all([
        new Promise<void>((r) => restServer.close(() => r())),
        new Promise<void>((r) => wsHttp.close(() => r()))
      ])
    }
  }
}

/** Whether a connection sent more than `max` messages within `windowMs` (records this one). */
export const overRate = (c: Conn, max: number, windowMs: number, nowMs = Date.now()): boolean => {
  c.incoming = c.incoming.filter((t) => t > nowMs - windowMs)
  c.incoming.push(nowMs)
  return c.incoming.length > max
}

/** The common interface of every replay venue, as the four-venue harness drives them. */
export interface ReplayVenueBase {
  readonly venue: "binance" | "bybit" | "okx" | "hyperliquid"
  readonly restUrl: string
  readonly wsUrl: string
  readonly symbols: ReadonlyArray<{ readonly symbol: string; readonly ticker: string; readonly tokensPerUnit: number }>
  readonly stalenessOf: (symbol: string, bid: number, ask: number, atMs: number) => number | undefined
  /** Symbols whose top of book some open connection subscribes now. */
  readonly streamedSymbols: () => ReadonlyArray<string>
  /** Symbols whose bars someone asked over REST. */
  readonly barsAsked: () => ReadonlyArray<string>
  readonly dropStreams: () => void
  readonly refuseConnections: (on: boolean) => void
  readonly setMeanInterval: (ms: number) => void
  /**
   * Moves the subscribed books as fast as the connections drain until `frames` top-of-book frames were sent
   * (`blast.ts`; the streams bench's ingest measure): what was sent in all, the book frames among it, how long.
   */
  readonly blast: (frames: number) => Promise<{ readonly sent: number; readonly book: number; readonly ms: number }>
  /** Frames sent so far by kind, and connections. */
  readonly frames: () => { readonly total: number; readonly byKind: Readonly<Record<string, number>> }
  readonly connections: () => number
  readonly close: () => Promise<void>
}
