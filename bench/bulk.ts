/**
 * Bulk ingest of a companyfacts archive, side by side with PostgreSQL's own `COPY` (issue 17, point 5):
 *
 * 1. A synthetic `companyfacts.zip` of `BENCH_BULK_COMPANIES` entries (default 40), generated deterministically
 *    from the real Apple companyfacts document (`../shared/data/sec`; a generated document of the same shape when
 *    it is absent): company i keeps a seeded subset of Apple's concepts and of their rows, under its own CIK and
 *    name, so entries differ in size as real ones do.
 * 2. `market-data ingest sec companyfacts.zip` into server PostgreSQL, in its own process: the ingest's time (the
 *    sum of its per-entry times, which its plain progress lines report; the process start and migrations are
 *    shown apart), rows (facts) per second, and its peak RSS (VmHWM).
 * 3. The same rows (each entry parsed by the same parser, deduplicated the same way) written by one
 *    `COPY ... FROM STDIN` into a scratch table with `equity_facts`' columns and indexes: rows per second. Steps 2
 *    and 3 run back to back `BENCH_BULK_PAIRS` times (default 3); the median pair's ratio is reported.
 * 4. The same ingest into an embedded store (PGlite): rows per second and peak RSS; the peak of creating a new
 *    store is measured apart (the ingest process, and the child process that runs PGlite's initdb).
 * 5. An archive of two entries of the largest real size (Apple's concepts `BENCH_BULK_LARGE_COPIES` times over,
 *    default 12: about 44 MB each) ingested on PostgreSQL: its peak RSS, the memory target's hard case.
 * 6. The projected time for the SEC's whole companyfacts archive (about 19,000 companies, about 1.3 GB zipped) at
 *    the measured rate of compressed bytes per second.
 *
 * Targets: bulk ingest on PostgreSQL >= 0.5x the `COPY` rate; ingest RSS <= 1 GB, large entries and a new store
 * included. A side-by-side table closes the run, each target met or not, with the load average.
 * Alone: `BENCH_ONLY=bulk node bench/run.ts` (needs server PostgreSQL, BENCH_DATABASE_URL).
 */
import { spawn } from "node:child_process"
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import { factCopyText, openPostgres } from "@market-data/postgres"
import { parseCompanyFacts } from "@market-data/sources"
import { Result } from "effect"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { migrateToLatest } from "../infra/src/Migrate.ts"
import { ZipWriter } from "../test/support/zip-writer.ts"

const ROOT = join(import.meta.dirname, "..")
const APPLE = join(ROOT, "..", "shared", "data", "sec", "companyfacts", "CIK0000320193.json")
/** The SEC's companyfacts.zip, for the projection. */
const WHOLE_ARCHIVE_BYTES = 1.3e9
const WHOLE_ARCHIVE_COMPANIES = 19_000
const TARGET_RATIO = 0.5
const TARGET_RSS_MB = 1024

/** A deterministic generator (mulberry32). */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

type Doc = {
  cik: number
  entityName: string
  facts: Record<string, Record<string, { label?: string; units: Record<string, Array<Record<string, unknown>>> }>>
}

/** A document of Apple's shape, for machines without the real data: 300 concepts of 40 rows. */
const generatedTemplate = (): Doc => {
  const rand = random(17)
  const concepts: Doc["facts"][string] = {}
  for (let c = 0; c < 300; c++) {
    const rows: Array<Record<string, unknown>> = []
    for (let r = 0; r < 40; r++) {
      const year = 2009 + (r % 16)
      const q = r % 4
      rows.push({
        start: `${year}-${String(q * 3 + 1).padStart(2, "0")}-01`,
        end: `${year}-${String(q * 3 + 3).padStart(2, "0")}-28`,
        val: Math.round(rand() * 1e11),
        accn: `0000320193-${String(year % 100).padStart(2, "0")}-${String(100 + r).padStart(6, "0")}`,
        fy: year,
        fp: q === 3 ? "FY" : `Q${q + 1}`,
        form: q === 3 ? "10-K" : "10-Q",
        filed: `${year + 1}-01-30`,
        ...(r % 3 === 0 ? { frame: `CY${year}Q${q + 1}` } : {})
      })
    }
    concepts[`Concept${c}`] = { label: `Concept ${c}`, units: { USD: rows } }
  }
  return { cik: 320193, entityName: "Generated Inc.", facts: { "us-gaap": concepts } }
}

/** Company i: a seeded subset of the template's concepts (25 % to 100 %) and of their rows (50 % to 100 %). */
const company = (template: Doc, i: number): string => {
  const rand = random(1000 + i)
  const keepConcepts = 0.25 + 0.75 * rand()
  const keepRows = 0.5 + 0.5 * rand()
  const facts: Doc["facts"] = {}
  for (const [taxonomy, concepts] of Object.entries(template.facts)) {
    const kept: Doc["facts"][string] = {}
    for (const [name, concept] of Object.entries(concepts)) {
      if (rand() > keepConcepts) continue
      const units: Record<string, Array<Record<string, unknown>>> = {}
      for (const [unit, rows] of Object.entries(concept.units)) {
        const n = Math.max(1, Math.round(rows.length * keepRows))
        units[unit] = rows.slice(rows.length - n)
      }
      kept[name] = { ...concept, units }
    }
    facts[taxonomy] = kept
  }
  return JSON.stringify({ cik: 5_000_000 + i, entityName: `Bench Company ${i} Inc.`, facts })
}

export interface BulkBench {
  readonly companies: number
  readonly source: string
  readonly archive_bytes: number
  readonly uncompressed_bytes: number
  readonly rows: number
  readonly postgres: IngestRun
  readonly copy_rows_per_s: number
  readonly ratio_to_copy: number
  /** Each anchor-and-ingest pair run back to back; the median pair's figures are the ones above. */
  readonly pairs: ReadonlyArray<{ copy_rows_per_s: number; ingest: IngestRun; ratio: number; load: number }>
  readonly pglite: IngestRun
  /** A new embedded store: the ingest process's peak, and that of the child process that creates the cluster. */
  readonly pglite_new_store_peak_rss_mb: number
  readonly pglite_new_store_creation_peak_rss_mb: number
  readonly large_entries: LargeEntryRun
  readonly load_average: ReadonlyArray<number>
  readonly projected_whole_archive_postgres_s: number
  readonly projected_whole_archive_pglite_s: number
  readonly targets_met: boolean
}

interface IngestRun {
  readonly ingest_ms: number
  readonly wall_ms: number
  readonly rows_written: number
  readonly rows_per_s: number
  readonly peak_rss_mb: number
  /** The largest peak of a process the ingest started (0: none): the embedded store's creation. */
  readonly child_peak_rss_mb: number
  readonly exit_code: number
}

/** The large-entry archive's run: two documents of the largest real size. */
export interface LargeEntryRun extends IngestRun {
  readonly entries: number
  readonly entry_mb: number
  readonly facts_per_entry: number
}

/** VmHWM (peak RSS) of a process in kB, 0 once it is gone. */
const hwm = (pid: number): number => {
  try {
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** The child processes of `pid` (those of its main thread: node spawns from it). */
const children = (pid: number): Array<number> => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * `market-data ingest sec <zip> --json` in its own process, its peak RSS sampled from /proc (VmHWM), and the
 * largest peak of any process it started (the embedded store's creation runs in one).
 */
const ingestProcess = (zip: string, env: Record<string, string>): Promise<IngestRun> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    // With V8's baseline WebAssembly compiler only, as the `market-data` launcher runs `ingest`.
    const child = spawn(process.execPath, ["--liftoff-only", "infra/src/bin.ts", "ingest", "sec", zip, "--json"], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    let peak = 0
    let childPeak = 0
    const sample = setInterval(() => {
      if (child.pid === undefined) return
      peak = Math.max(peak, hwm(child.pid))
      for (const c of children(child.pid)) childPeak = Math.max(childPeak, hwm(c))
    }, 50)
    child.stdout?.on("data", (d) => (out += d))
    child.stderr?.on("data", (d) => (err += d))
    child.on("exit", (code) => {
      clearInterval(sample)
      const wall = performance.now() - t0
      let ingestMs = 0
      for (const m of err.matchAll(/^ingesting \S+ \d+\/\d+: .* \((\d+) ms\)$/gm)) ingestMs += Number(m[1])
      try {
        const report = JSON.parse(out)
        const rows = Number(report.written.facts)
        resolve({
          ingest_ms: Math.round(ingestMs),
          wall_ms: Math.round(wall),
          rows_written: rows,
          rows_per_s: ingestMs > 0 ? Math.round(rows / (ingestMs / 1000)) : 0,
          peak_rss_mb: Math.round(peak / 1024),
          child_peak_rss_mb: Math.round(childPeak / 1024),
          exit_code: code ?? -1
        })
      } catch {
        reject(new Error(`ingest exited ${code}: ${err.slice(-2000)}`))
      }
    })
  })

/**
 * A document of `copies` times the template's concepts (each concept again under `<name>Copy<k>`): the shape of
 * the largest real companyfacts documents, tens of megabytes, for the memory measurement.
 */
const largeCompany = (template: Doc, i: number, copies: number): string => {
  const facts: Doc["facts"] = {}
  for (const [taxonomy, concepts] of Object.entries(template.facts)) {
    const kept: Doc["facts"][string] = {}
    for (let k = 0; k < copies; k++)
      for (const [name, concept] of Object.entries(concepts)) kept[k === 0 ? name : `${name}Copy${k}`] = concept
    facts[taxonomy] = kept
  }
  return JSON.stringify({ cik: 6_000_000 + i, entityName: `Bench Large Company ${i} Inc.`, facts })
}

export const bulkBench = async (databaseUrl: string, write: (line: string) => void): Promise<BulkBench> => {
  const n = Number(process.env.BENCH_BULK_COMPANIES ?? 40)
  const dir = mkdtempSync(join(tmpdir(), "md-bench-bulk-"))
  const schema = `md_bench_bulk_${process.pid}`
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  try {
    const real = existsSync(APPLE)
    const template: Doc = real ? JSON.parse(readFileSync(APPLE, "utf8")) : generatedTemplate()
    const source = real ? "Apple's companyfacts (real), varied per company" : "a generated document of Apple's shape"
    // The archive, and the COPY text of the same rows (streamed to a file, never all in memory).
    const zip = join(dir, "companyfacts.zip")
    const copyFile = join(dir, "facts.copy")
    const copyOut = createWriteStream(copyFile)
    const writer = new ZipWriter(zip)
    let rows = 0
    let uncompressed = 0
    for (let i = 0; i < n; i++) {
      const text = company(template, i)
      uncompressed += text.length
      writer.add(`CIK${String(5_000_000 + i).padStart(10, "0")}.json`, text)
      const parsed = parseCompanyFacts(text)
      if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
      const r = factCopyText(parsed.success.cik, parsed.success.facts)
      rows += r.rows
      for (const piece of r.pieces)
        if (!copyOut.write(piece)) await new Promise<void>((ok) => copyOut.once("drain", () => ok()))
    }
    const archiveBytes = writer.close()
    await new Promise<void>((ok) => copyOut.end(ok))
    write(
      `bulk: ${n} companies from ${source}: ${(archiveBytes / 1e6).toFixed(1)} MB zipped, ${(uncompressed / 1e6).toFixed(1)} MB of JSON, ${rows.toLocaleString("en-US")} fact rows\n`
    )

    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.query(`create schema ${schema}`)
    const url = new URL(databaseUrl)
    url.searchParams.set("options", `-c search_path=${schema}`)
    const scoped = url.toString()

    // PostgreSQL COPY, the anchor: one COPY of every row into a scratch table shaped and indexed like equity_facts.
    const migrating = openPostgres(scoped, { poolSize: 1 })
    await migrateToLatest(migrating.db)
    await migrating.close()
    await admin.query(`create table ${schema}.bench_copy_facts (like ${schema}.equity_facts including all)`)
    const copyOnce = async (): Promise<number> => {
      await admin.query(`truncate ${schema}.bench_copy_facts`)
      const client = new pg.Client({ connectionString: scoped })
      await client.connect()
      const c0 = performance.now()
      await client.query("begin")
      await pipeline(
        createReadStream(copyFile),
        client.query(
          copyFrom(
            `copy bench_copy_facts (cik, taxonomy, concept, unit, start_date, end_date, accession, value, fy, fp, form, filed, frame) from stdin`
          )
        )
      )
      await client.query("commit")
      const copyMs = performance.now() - c0
      await client.end()
      return copyMs
    }
    // The anchor and the ingest, back to back, `BENCH_BULK_PAIRS` times (default 3; the store emptied before
    // each ingest): on a shared machine the load moves within seconds, so each pair's ratio is its own and the
    // median pair is the one reported.
    const pairs: Array<{ copy_rows_per_s: number; ingest: IngestRun; ratio: number; load: number }> = []
    for (let k = 0; k < Number(process.env.BENCH_BULK_PAIRS ?? 3); k++) {
      const copyMs = await copyOnce()
      const copyRate = Math.round(rows / (copyMs / 1000))
      write(
        `bulk: PostgreSQL COPY into a scratch table: ${rows.toLocaleString("en-US")} rows in ${Math.round(copyMs)} ms, ${copyRate.toLocaleString("en-US")} rows/s\n`
      )
      await admin.query(
        `truncate ${schema}.equity_facts, ${schema}.equity_filings, ${schema}.equity_companies, ${schema}.equity_bulk_entries`
      )
      const run = await ingestProcess(zip, { DATABASE_URL: scoped })
      const r = Math.round((run.rows_per_s / copyRate) * 100) / 100
      pairs.push({ copy_rows_per_s: copyRate, ingest: run, ratio: r, load: Math.round((loadavg()[0] ?? 0) * 10) / 10 })
      write(
        `bulk: ingest sec companyfacts.zip (PostgreSQL): ${run.rows_written.toLocaleString("en-US")} rows in ${run.ingest_ms} ms (${run.wall_ms} ms with the process start), ${run.rows_per_s.toLocaleString("en-US")} rows/s, ${r}x of COPY, peak RSS ${run.peak_rss_mb} MB (load average ${(loadavg()[0] ?? 0).toFixed(1)})\n`
      )
    }
    const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)] as (typeof pairs)[number]
    const copyRate = median.copy_rows_per_s
    const ratio = median.ratio
    const postgres: IngestRun = {
      ...median.ingest,
      peak_rss_mb: Math.max(...pairs.map((p) => p.ingest.peak_rss_mb)),
      exit_code: pairs.every((p) => p.ingest.exit_code === 0) ? 0 : 1
    }
    // A new embedded store: created first by an ingest of an empty archive, measured apart from the ingest into
    // it. The cluster is created (PGlite's initdb) in a child process of the ingest: both peaks are reported.
    const pgliteDir = join(dir, "pglite")
    const empty = join(dir, "empty.zip")
    new ZipWriter(empty).close()
    const created = await ingestProcess(empty, { MARKET_DATA_DIR: pgliteDir })
    write(
      `bulk: a new embedded store (PGlite creating its cluster, nothing ingested): peak RSS ${created.peak_rss_mb} MB, the creating child process ${created.child_peak_rss_mb} MB\n`
    )
    const pglite = await ingestProcess(zip, { MARKET_DATA_DIR: pgliteDir })
    write(
      `bulk: ingest sec companyfacts.zip (PGlite): ${pglite.rows_written.toLocaleString("en-US")} rows in ${pglite.ingest_ms} ms (${pglite.wall_ms} ms with the process start), ${pglite.rows_per_s.toLocaleString("en-US")} rows/s, peak RSS ${pglite.peak_rss_mb} MB\n`
    )

    // The largest entries: two documents of the largest real companyfacts size, on PostgreSQL.
    const copies = Number(process.env.BENCH_BULK_LARGE_COPIES ?? 12)
    const largeZip = join(dir, "large.zip")
    const largeWriter = new ZipWriter(largeZip)
    let largeBytes = 0
    for (let i = 0; i < 2; i++) {
      const text = largeCompany(template, i, copies)
      largeBytes = Math.max(largeBytes, Buffer.byteLength(text))
      largeWriter.add(`CIK${String(6_000_000 + i).padStart(10, "0")}.json`, text)
    }
    largeWriter.close()
    const largeRun = await ingestProcess(largeZip, { DATABASE_URL: scoped })
    const large: LargeEntryRun = {
      ...largeRun,
      entries: 2,
      entry_mb: Math.round(largeBytes / 1e5) / 10,
      facts_per_entry: Math.round(largeRun.rows_written / 2)
    }
    write(
      `bulk: an archive of 2 entries of ${large.entry_mb} MB (${large.facts_per_entry.toLocaleString("en-US")} facts each) on PostgreSQL: ${large.rows_per_s.toLocaleString("en-US")} rows/s, peak RSS ${large.peak_rss_mb} MB\n`
    )

    const bytesPerS = (run: IngestRun) => archiveBytes / (run.ingest_ms / 1000)
    const projectedPg = Math.round(WHOLE_ARCHIVE_BYTES / bytesPerS(postgres))
    const projectedPglite = Math.round(WHOLE_ARCHIVE_BYTES / bytesPerS(pglite))
    const minutes = (s: number) => `${Math.floor(s / 60)} min ${s % 60} s`
    write(
      `bulk: projected for the whole companyfacts.zip (~${WHOLE_ARCHIVE_COMPANIES.toLocaleString("en-US")} companies, ~1.3 GB zipped) at the measured zipped bytes/s: PostgreSQL ${minutes(projectedPg)}, PGlite ${minutes(projectedPglite)}\n`
    )
    const loadAverage = loadavg().map((l) => Math.round(l * 100) / 100)
    const verdict = (ok: boolean) => (ok ? "met" : "NOT met")
    const ran = [postgres, pglite, created, large].every((r) => r.exit_code === 0)
    const targets: Array<[string, boolean]> = [
      [
        `ingest on PostgreSQL >= ${TARGET_RATIO}x of COPY (median pair ${ratio}x; pairs ${pairs.map((p) => `${p.ratio}x`).join(", ")})`,
        ratio >= TARGET_RATIO
      ],
      [
        `ingest RSS <= ${TARGET_RSS_MB} MB: PostgreSQL ${postgres.peak_rss_mb}, PGlite ${pglite.peak_rss_mb}, large entries ${large.peak_rss_mb} MB`,
        Math.max(postgres.peak_rss_mb, pglite.peak_rss_mb, large.peak_rss_mb) <= TARGET_RSS_MB
      ],
      [
        `a new embedded store <= ${TARGET_RSS_MB} MB: ingest process ${created.peak_rss_mb}, creating child ${created.child_peak_rss_mb} MB`,
        Math.max(created.peak_rss_mb, created.child_peak_rss_mb) <= TARGET_RSS_MB
      ],
      ["every ingest exited 0", ran]
    ]
    write(
      [
        `bulk, side by side (load average ${loadAverage.join(", ")} on ${cpus().length} cores):`,
        `  COPY anchor                 ${copyRate.toLocaleString("en-US").padStart(9)} rows/s`,
        `  ingest, PostgreSQL          ${postgres.rows_per_s.toLocaleString("en-US").padStart(9)} rows/s  ${ratio}x  peak ${postgres.peak_rss_mb} MB  whole archive ${minutes(projectedPg)}`,
        `  ingest, PGlite              ${pglite.rows_per_s.toLocaleString("en-US").padStart(9)} rows/s  ${Math.round((pglite.rows_per_s / copyRate) * 100) / 100}x  peak ${pglite.peak_rss_mb} MB  whole archive ${minutes(projectedPglite)}`,
        `  new PGlite store            peak ${created.peak_rss_mb} MB (creating child ${created.child_peak_rss_mb} MB)`,
        `  2 x ${large.entry_mb} MB entries, PG   ${large.rows_per_s.toLocaleString("en-US").padStart(9)} rows/s  peak ${large.peak_rss_mb} MB`,
        ...targets.map(([what, ok]) => `  target: ${what}: ${verdict(ok)}`)
      ].join("\n") + "\n"
    )
    const met = targets.every(([, ok]) => ok)
    write(`bulk targets: ${verdict(met)}\n`)
    return {
      companies: n,
      source,
      archive_bytes: archiveBytes,
      uncompressed_bytes: uncompressed,
      rows,
      postgres,
      copy_rows_per_s: copyRate,
      ratio_to_copy: ratio,
      pairs,
      pglite,
      pglite_new_store_peak_rss_mb: created.peak_rss_mb,
      pglite_new_store_creation_peak_rss_mb: created.child_peak_rss_mb,
      large_entries: large,
      load_average: loadAverage,
      projected_whole_archive_postgres_s: projectedPg,
      projected_whole_archive_pglite_s: projectedPglite,
      targets_met: met
    }
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}
