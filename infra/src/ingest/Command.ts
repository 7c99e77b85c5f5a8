/** The `ingest` command: its arguments, the store it writes (a database, never `memory`), the report. */
import { Equity } from "@market-data/core"
import { makePgEquityStore } from "@market-data/postgres"
import { Effect, References } from "effect"
import { type AppConfig, ConfigProblem, loadConfig } from "../AppConfig.ts"
import type { ProgressFactory } from "../Progress.ts"
import { openStores } from "../Stores.ts"
import { ingestSecWithArchives } from "./Bulk.ts"
import { ingestPrices } from "./Prices.ts"
import { type IngestIo, reportIngest } from "./Report.ts"
import { ingestSec } from "./Sec.ts"
import { IngestUsage } from "./Summary.ts"

export interface IngestArgs {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, string | true>
}

const storeNeeded = new ConfigProblem(
  "`ingest` writes into a database the server reads: DATABASE_URL=memory lives inside one process. Use the embedded store (DATABASE_URL unset, with the server stopped) or PostgreSQL."
)

/**
 * `ingest sec <file-or-dir>... [--json]` and `ingest prices <csv-or-dir>... [--id eq:<cik>:<ticker>] [--json]`;
 * the exit code follows `ingestExitCode`.
 */
export const ingestCommand = (
  args: IngestArgs,
  io: IngestIo,
  progress: ProgressFactory,
  config?: AppConfig
): Effect.Effect<number, IngestUsage | ConfigProblem> =>
  Effect.gen(function* () {
    const [, sub, ...rest] = args.positional
    const json = args.flags.get("json") === true
    const allowed = sub === "prices" ? ["json", "id"] : ["json"]
    for (const name of args.flags.keys()) {
      if (!allowed.includes(name)) return yield* Effect.fail(new IngestUsage(`unknown option --${name}`))
    }
    if (sub !== "sec" && sub !== "prices") {
      return yield* Effect.fail(
        new IngestUsage(`unknown ingest command ${JSON.stringify(sub ?? "")}; use sec or prices`)
      )
    }
    if (rest.length === 0) {
      return yield* Effect.fail(
        new IngestUsage(
          sub === "sec" ? "ingest sec needs files or directories" : "ingest prices needs CSV files or directories"
        )
      )
    }
    let id: string | undefined
    if (sub === "prices") {
      const flag = args.flags.get("id")
      if (flag !== undefined && (flag === true || Equity.parseEquityId(flag) === undefined)) {
        return yield* Effect.fail(
          new IngestUsage(`--id ${JSON.stringify(flag === true ? "" : flag)} is not an equity ID like eq:320193:AAPL`)
        )
      }
      id = flag === undefined ? undefined : flag
    }
    const cfg = config ?? (yield* loadConfig)
    if (cfg.store._tag === "Memory") return yield* Effect.fail(storeNeeded)
    // Info logs (migrations applied on a new store) would mix with the data on stdout.
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const stores = yield* openStores(cfg).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
        if (stores.database === undefined) return yield* Effect.fail(storeNeeded)
        const store = makePgEquityStore(stores.database)
        const summary =
          sub === "sec"
            ? yield* ingestSecWithArchives(stores.database, store, rest, progress, (files) =>
                ingestSec(store, files, progress)
              )
            : yield* ingestPrices(store, rest, id)
        return reportIngest(summary, stores.description, json, io)
      })
    )
  })
