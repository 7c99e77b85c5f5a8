/** Entry point of the `market-data` command. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit } from "effect"
import { runCli } from "./Cli.ts"

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
