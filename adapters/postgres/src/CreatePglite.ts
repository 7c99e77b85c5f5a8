/**
 * Creates a new PGlite cluster (its WebAssembly `initdb`) in the data directory given as the first argument, with
 * the `postgresql.conf` settings given after it, and exits. Run by `openPglite` as a child process on V8's
 * baseline WebAssembly compiler (`--liftoff-only`), so the process that opens the store never holds initdb's
 * memory: see `createClusterApart` in `Database.ts`.
 */
import { PGlite } from "@electric-sql/pglite"

const [dataDir, ...postgresqlconf] = process.argv.slice(2)
if (dataDir === undefined) {
  process.stderr.write("usage: CreatePglite <data dir> [setting=value...]\n")
  process.exit(2)
}
const pglite = await PGlite.create({ dataDir, postgresqlconf })
await pglite.query("select 1")
await pglite.close()
