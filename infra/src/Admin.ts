/**
 * The local admin channel of a server on the embedded store. PGlite admits one process, so while `serve` holds
 * the data folder the key, credit and doctor commands cannot open it; instead they hand their command line to
 * the server, which runs it on its own stores and sends back the output and the exit code.
 *
 * The channel is a Unix socket, `<MARKET_DATA_DIR>/admin/admin.sock`, in a folder only the owner may enter
 * (0700; the socket itself 0600): no network caller can reach it, and no other local user. The server also
 * refuses any connection that is not a Unix-socket one (403), should the handler ever be mounted elsewhere.
 * Protocol: `POST /v1/command` with `{"argv": [...]}`, answered `{"code", "out": [lines], "err": [lines]}`.
 */
import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs"
import * as http from "node:http"
import { join, resolve } from "node:path"
import { Effect } from "effect"

/** Longest path a Unix socket may have (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 100
const MAX_BODY_BYTES = 64 * 1024
/** The commands the channel runs; anything else is refused. */
export const ADMIN_COMMANDS: ReadonlySet<string> = new Set(["keys", "credits", "doctor"])

export const adminSocketPath = (dataDir: string): string => join(resolve(dataDir), "admin", "admin.sock")

export interface AdminIo {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/** Runs one command line (already checked to be one of `ADMIN_COMMANDS`) on the server's stores. */
export type AdminRunner = (argv: ReadonlyArray<string>, io: AdminIo) => Effect.Effect<number>

interface AdminReply {
  readonly code: number
  readonly out: ReadonlyArray<string>
  readonly err: ReadonlyArray<string>
}

const reply = (res: http.ServerResponse, status: number, body: AdminReply) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const refusal = (message: string): AdminReply => ({ code: 2, out: [], err: [`market-data: ${message}`] })

/** The channel's request handler. Exported for tests: it refuses every caller that is not on a Unix socket. */
export const adminHandler =
  (run: AdminRunner) =>
  (req: http.IncomingMessage, res: http.ServerResponse): void => {
    // A Unix-socket peer has no address; any TCP peer (local or remote) is refused.
    if (req.socket.remoteAddress !== undefined) {
      reply(res, 403, refusal("the admin channel accepts local Unix-socket connections only"))
      return
    }
    if (req.method !== "POST" || req.url !== "/v1/command") {
      reply(res, 404, refusal("the admin channel answers POST /v1/command only"))
      return
    }
    let body = ""
    let tooLarge = false
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => {
      body += chunk
      if (body.length > MAX_BODY_BYTES) tooLarge = true
    })
    req.on("end", () => {
      if (tooLarge) return reply(res, 413, refusal("command too large"))
      let argv: unknown
      try {
        argv = (JSON.parse(body) as { argv?: unknown }).argv
      } catch {
        return reply(res, 400, refusal("the request is not JSON"))
      }
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
        return reply(res, 400, refusal('expected {"argv": ["keys", ...]}'))
      }
      const command = argv[0] as string
      if (!ADMIN_COMMANDS.has(command)) {
        return reply(
          res,
          400,
          refusal(`\`${command}\` does not run over the admin channel; only keys, credits, doctor`)
        )
      }
      const out: Array<string> = []
      const err: Array<string> = []
      Effect.runPromise(run(argv as Array<string>, { out: (l) => out.push(l), err: (l) => err.push(l) })).then(
        (code) => reply(res, 200, { code, out, err }),
        (e) => reply(res, 500, { code: 1, out, err: [...err, `market-data: the server failed: ${String(e)}`] })
      )
    })
  }

/**
 * Serves the admin channel for the life of the scope. Skipped, with a warning, when the socket path would be too
 * long for the platform. The data folder's lock (held by the caller) makes this process the only server there, so
 * a socket file left by a dead one is removed first.
 */
export const serveAdmin = (dataDir: string, run: AdminRunner) =>
  Effect.gen(function* () {
    const path = adminSocketPath(dataDir)
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      yield* Effect.logWarning(
        `admin channel off: its socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes; key commands need the server stopped`
      )
      return undefined
    }
    const dir = join(resolve(dataDir), "admin")
    yield* Effect.acquireRelease(
      Effect.callback<http.Server, Error>((resume) => {
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 })
          chmodSync(dir, 0o700)
          rmSync(path, { force: true })
        } catch (e) {
          resume(Effect.fail(e as Error))
          return
        }
        const server = http.createServer(adminHandler(run))
        server.once("error", (e) => resume(Effect.fail(e)))
        server.listen(path, () => {
          try {
            chmodSync(path, 0o600)
          } catch (e) {
            server.close()
            resume(Effect.fail(e as Error))
            return
          }
          resume(Effect.succeed(server))
        })
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.close(() => {
            rmSync(path, { force: true })
            resume(Effect.void)
          })
          server.closeAllConnections()
        })
    ).pipe(
      Effect.catch((e: Error) =>
        Effect.logWarning(
          `admin channel off: cannot listen on ${path}: ${e.message}; key commands need the server stopped`
        )
      )
    )
    return path
  })

/**
 * Sends a command line to the server running on `dataDir`, writing its output to `io`. Resolves to the exit code,
 * or undefined when no server answers there (no socket, or a stale one): the caller then opens the store itself.
 */
export const sendToServer = (dataDir: string, argv: ReadonlyArray<string>, io: AdminIo): Promise<number | undefined> =>
  new Promise((resolvePromise) => {
    const path = adminSocketPath(dataDir)
    if (!existsSync(path)) return resolvePromise(undefined)
    const request = http.request(
      { socketPath: path, method: "POST", path: "/v1/command", headers: { "content-type": "application/json" } },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          body += chunk
        })
        res.on("end", () => {
          try {
            const answer = JSON.parse(body) as AdminReply
            for (const line of answer.out) io.out(line)
            for (const line of answer.err) io.err(line)
            resolvePromise(answer.code)
          } catch {
            io.err(`market-data: the server's admin channel answered ${res.statusCode} with no result`)
            resolvePromise(1)
          }
        })
      }
    )
    request.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ECONNREFUSED" || e.code === "ENOENT") resolvePromise(undefined)
      else {
        io.err(`market-data: cannot reach the server's admin channel ${path}: ${e.message}`)
        resolvePromise(1)
      }
    })
    request.end(JSON.stringify({ argv }))
  })
