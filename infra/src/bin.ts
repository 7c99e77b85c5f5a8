/** Entry point of the `market-data` command. */
import { prewarmPgliteWorker } from "@market-data/postgres/pglite-worker"
import { applyServeV8Flags } from "./V8Flags.ts"

// Whatever this command creates is its user's alone (the embedded store's data folder is kept owner-only besides:
// see DataFolder.ts in the postgres adapter). Children (the cluster's creation, the kept history's generator)
// inherit it.
process.umask(0o077)

// `serve`: V8's settings for a long-running server (see V8Flags.ts), before anything else runs.
if (process.argv[2] === "serve") applyServeV8Flags()

// `serve` on the embedded store with DATABASE_PGLITE_WORKER=on: PGlite's worker thread starts first, and compiles PGlite's WebAssembly while
// this thread loads the service's modules (the database itself is opened later, under the data folder's lock).
// A wrong setting here costs nothing: the configuration is read, and refused, as always.
if (
  process.argv[2] === "serve" &&
  (process.env.DATABASE_URL ?? "") === "" &&
  process.env.DATABASE_PGLITE_WORKER === "on"
)
  prewarmPgliteWorker()

const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { Cause, Effect, Exit } = await import("effect")
const { runCli } = await import("./Cli.ts")
// The launcher's "loading the service's modules" lines stop here (infra/bin/market-data.js).
;(globalThis as Record<symbol, (() => void) | undefined>)[Symbol.for("market-data/modules-loaded")]?.()

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`)
}

NodeRuntime.runMain(
  runCli(process.argv.slice(2), io).pipe(Effect.flatMap((code) => Effect.sync(() => (process.exitCode = code)))),
  {
    // SIGTERM/SIGINT interrupt the server, which stops accepting, drains in-flight requests and closes the
    // stores; that is a clean shutdown, so exit 0.
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) return onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
      if (Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
      process.stderr.write(`market-data: ${Cause.pretty(exit.cause)}\n`)
      return onExit(1)
    }
  }
)
