/**
 * A private PostgreSQL cluster for tests that stop and start the database under load (the machine's shared
 * server must never be restarted: other suites use it). It is the Debian binaries (`initdb`, `pg_ctl`) on a
 * data directory in a temporary folder, listening on a free port of 127.0.0.1 with trust authentication.
 * PostgreSQL refuses to run as root, so as root the binaries run as the `postgres` user (`runuser`), in a
 * folder that user owns; as anyone else they run as that user.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The folder holding `initdb` and `pg_ctl`: `PG_BIN` when set, else the newest `/usr/lib/postgresql/<n>/bin`. */
export const findPostgresBin = (): string | undefined => {
  const fromEnv = process.env.PG_BIN
  if (fromEnv !== undefined && existsSync(join(fromEnv, "pg_ctl"))) return fromEnv
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter(
      (v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")) && existsSync(join(root, v, "bin", "pg_ctl"))
    )
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin")
}

/** A port nothing listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string
  readonly port: number
  /** Stops the server; `immediate` is a crash (no checkpoint, connections cut), recovered at the next start. */
  readonly stop: (mode?: "fast" | "immediate") => Promise<void>
  /** Starts it again on the same port and data directory (waits until it accepts connections). */
  readonly start: () => Promise<void>
  /** Whether the server is running. */
  readonly running: () => boolean
  /** Stops it (if running) and deletes the data directory. */
  readonly destroy: () => Promise<void>
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0

const commandFor = (bin: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, [...args]]

/**
 * Runs a PostgreSQL binary as the right user, without blocking the event loop (requests under test are
 * in flight meanwhile); rejects with its output on failure.
 */
const runPg = (bin: string, args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    const [command, argv] = commandFor(bin, args)
    execFile(command, argv, { encoding: "utf8", timeout: 90_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${bin} ${args.join(" ")} failed: ${stderr || stdout || error.message}`))
      else resolve(stdout)
    })
  })

/** Why a private cluster cannot be made here, or undefined when it can. */
export const privatePostgresUnavailable = (): string | undefined => {
  if (findPostgresBin() === undefined)
    return "no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql or PG_BIN"
  if (asRoot && spawnSync("id", ["-u", "postgres"]).status !== 0) return "running as root and there is no postgres user"
  return undefined
}

/** Creates and starts a private cluster. */
export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  const bin = findPostgresBin()
  if (bin === undefined) throw new Error(privatePostgresUnavailable())
  const dir = mkdtempSync(join(tmpdir(), "md-faults-pg-"))
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, "data")
  const log = join(dir, "server.log")
  await runPg(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    // fsync off only matters if the machine crashes; every commit still reaches the WAL before it is
    // acknowledged (synchronous_commit stays on), so an immediate stop loses no acknowledged transaction.
    "-c fsync=off",
    "-c max_connections=200",
    "-c shared_buffers=64MB"
  ].join(" ")
  let up = false
  const start = async () => {
    try {
      await runPg(join(bin, "pg_ctl"), ["-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"])
    } catch (e) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : ""
      throw new Error(`${(e as Error).message}\n${tail}`)
    }
    up = true
  }
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    await runPg(join(bin, "pg_ctl"), ["-D", data, "-m", mode, "-w", "-t", "60", "stop"])
    up = false
  }
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    running: () => up,
    destroy: async () => {
      try {
        if (up) await stop("immediate")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
