/**
 * The port, open from the first moment of a start: `serve` binds `HOST:PORT` before it opens the stores (a first
 * start then creates the embedded database, migrates it and writes the simulated filings, which takes tens of
 * seconds), and until the service is open this listener answers every request itself, touching nothing:
 *
 * - `/healthz`: `200 {"status":"ok"}`: the process is alive and starting;
 * - `/readyz`: `503 {"status":"not_ready","missing":[...]}` naming the steps under way (`StartProgress`);
 * - anything else (the API, MCP, the docs page): `503 source_unavailable` with `Retry-After: 1`, the answer a
 *   request gets for data still loading: transient, nothing executed, no rate unit, no credit held or charged.
 *
 * Every answer closes its connection, so no client stays on this listener. When the service is open, the HTTP
 * transport takes over the listening socket itself (`handOver`: the same port, the same kernel queue, so no
 * connection is refused in between), and from then on it answers every new connection.
 */
import * as http from "node:http"
import { apiError } from "@market-data/core"
import { errorWire } from "@market-data/http"
import { Effect, type Scope } from "effect"
import { HEALTH_PATH, READY_PATH } from "./Telemetry.ts"

export interface EarlyListener {
  /** The bound port (the one `PORT=0` picked). */
  readonly port: number
  /**
   * The listening socket for the HTTP transport to listen on (`server.listen({ handle })`); from then on this
   * listener gets no new connection and its scope leaves the socket to the transport.
   */
  readonly handOver: () => unknown
}

/** Why a request is not served yet, in one sentence: the steps under way. */
const startingMessage = (doing: ReadonlyArray<string>) =>
  `the service is starting (${doing.length === 0 ? "opening the service" : doing.join("; ")}); nothing was executed or charged, retry in a second`

/**
 * Listens on `host:port` for the life of the scope (or until `handOver`), answering as the module says.
 * `doing` names the steps under way, read for each `/readyz` and each refusal. Fails with Node's error when
 * the port cannot be bound.
 */
export const listenEarly = (
  host: string,
  port: number,
  backlog: number,
  doing: () => ReadonlyArray<string>
): Effect.Effect<EarlyListener, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: http.Server; handedOver: boolean }, Error>((resume) => {
      const server = http.createServer({ headersTimeout: 20_000, requestTimeout: 60_000 }, answer(doing))
      const onError = (e: Error) => resume(Effect.fail(e))
      server.once("error", onError)
      server.listen({ host, port, backlog }, () => {
        server.off("error", onError)
        resume(Effect.succeed({ server, handedOver: false }))
      })
    }),
    (state) =>
      Effect.sync(() => {
        // Handed over: the socket is the transport's now, which closes it when it stops.
        if (!state.handedOver) state.server.close()
        state.server.closeAllConnections()
      })
  ).pipe(
    Effect.map((state) => ({
      port: (state.server.address() as { readonly port: number }).port,
      handOver: () => {
        // Connections this listener accepted before keep their answers (each closes after its own).
        state.handedOver = true
        return (state.server as unknown as { readonly _handle: unknown })._handle
      }
    }))
  )

/** The answers while the service opens. */
const answer = (doing: () => ReadonlyArray<string>) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  const url = req.url ?? "/"
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  const head = req.method === "HEAD"
  const write = (status: number, headers: Record<string, string>, body: string) => {
    res.writeHead(status, {
      ...headers,
      "cache-control": "no-store",
      "content-length": String(Buffer.byteLength(body)),
      connection: "close"
    })
    res.end(head ? undefined : body)
    // The request's body, if any, is not read: the connection closes with the answer.
    req.resume()
  }
  const json = { "content-type": "application/json" }
  if (path === HEALTH_PATH) return write(200, json, JSON.stringify({ status: "ok" }))
  if (path === READY_PATH) {
    const steps = doing()
    return write(
      503,
      json,
      JSON.stringify({
        status: "not_ready",
        missing: [`the service is starting: ${steps.length === 0 ? "opening the service" : steps.join("; ")}`]
      })
    )
  }
  const wire = errorWire(apiError("source_unavailable", startingMessage(doing()), { retryAfterSeconds: 1 }))
  // An error's body is its JSON text (`errorWire`).
  write(wire.status, { ...wire.headers, "x-credits-charged": "0" }, typeof wire.body === "string" ? wire.body : "")
}
