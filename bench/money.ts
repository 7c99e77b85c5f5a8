/**
 * The money path, side by side in one run (issue 18's targets): the one-write anchor (`anchors.ts write`: bare
 * `node:http` doing one `UPDATE ... RETURNING` per request), and the paid `price` of the test plane on server
 * PostgreSQL with group commit (the default) and without it (`DATABASE_BATCH_MAX=1`), each with the statements
 * it sent to PostgreSQL per request (`market_data_db_statements_total` before and after, over the requests
 * answered); the idempotent replay and the `304` against the paid path; the paid `read` on the memory store
 * against bare `node:http`, of the service's own planes (`serve`, the 35-asset registry) and, as a second row, of
 * the test plane; the paid `read` of the embedded default (PGlite, the 428-asset simulated market) beside bare
 * `node:http`; and the server's RSS after `BENCH_SOAK_SECONDS` (default 600) of sustained paid load on PostgreSQL.
 *
 * The comparisons made on one machine are measured in alternating rounds (`BENCH_MONEY_ROUNDS`, default 3): the
 * paid `price`, the replay and the `304` on the same PostgreSQL server; the bare anchor (kept running from the
 * start) and the memory server's paid `read` and replay. Each round's ratio is taken against the same round's
 * base, and a row carries the median ratio and the median req/s of its rounds (`rounds`: each round), so drift of
 * a shared machine falls on both sides instead of on whichever ran later.
 *
 * Run by `npm run bench`, or alone: `BENCH_ONLY=money node bench/run.ts`. Prints each row and the targets met or
 * not; the caller writes the JSON.
 */
import autocannon from "autocannon"

export interface MoneyRow {
  readonly scenario: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  /** Against the named row (req/s ratio). */
  readonly against?: string
  readonly ratio?: number
  /** Statements sent to PostgreSQL per answered request (group commit rows). */
  readonly statementsPerRequest?: number
  readonly rssMb?: number
  /** Alternating rounds (see the module comment): each round's req/s, its base's req/s and their ratio. */
  readonly rounds?: ReadonlyArray<MoneyRound>
}

export interface MoneyRound {
  readonly rps: number
  readonly baseRps: number
  readonly ratio: number
}

export interface MoneyTarget {
  readonly target: string
  readonly measured: string
  readonly met: boolean
}

export interface MoneyBench {
  readonly rows: ReadonlyArray<MoneyRow>
  readonly targets: ReadonlyArray<MoneyTarget>
  readonly soakSeconds: number
  readonly soakRssMb: number
  readonly loadAverage: ReadonlyArray<number>
}

export interface Launched {
  readonly url: string
  /** Where a `serve` process answers `/metrics` (its own port). */
  readonly metricsUrl?: string | undefined
  readonly pid: number | undefined
  readonly stop: () => Promise<void>
}

export interface MoneyBenchDeps {
  /** Starts a process (`args` after node, in the repository root) and resolves with its URL once it listens. */
  readonly launch: (args: ReadonlyArray<string>, env: Record<string, string>) => Promise<Launched>
  /** A URL whose connections land in the bench's own schema. */
  readonly scoped: string
  readonly key: string
  readonly connections: number
  readonly seconds: number
  readonly rssMb: (pid: number | undefined) => number
  readonly print: (line: string) => void
  /** Waits until a server of the real planes answers `rank` (its baselines warm). */
  readonly untilWarm: (url: string, headers: Record<string, string>) => Promise<void>
  /** A new empty folder (an embedded data folder), removed when the bench ends. */
  readonly tempDir: () => Promise<string>
}

/**
 * The total of `market_data_db_statements_total` on a server's `/metrics` (rendered at most once a second: read
 * after the cache's second has passed).
 */
const statementsOf = async (s: Launched): Promise<number> => {
  const url = s.metricsUrl
  if (url === undefined) throw new Error(`${s.url}: no metrics port in its startup line`)
  await new Promise((r) => setTimeout(r, 1_100))
  const text = await (await fetch(`${url}/metrics`)).text()
  const m = /^market_data_db_statements_total (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)
  if (m === null) throw new Error(`${url}/metrics has no market_data_db_statements_total`)
  return Number(m[1])
}

/** Alternating rounds of the money comparisons (`BENCH_MONEY_ROUNDS`). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_MONEY_ROUNDS ?? 3))

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

const round2 = (x: number) => Math.round(x * 100) / 100

export const moneyBench = async (deps: MoneyBenchDeps): Promise<MoneyBench> => {
  const rows: Array<MoneyRow> = []
  const { connections, seconds } = deps
  const auth = { authorization: `Bearer ${deps.key}` }
  const env = {
    PORT: "0",
    MARKET_DATA_BOOTSTRAP_KEY: deps.key,
    MARKET_DATA_BOOTSTRAP_CREDITS: "1000000000",
    MARKET_DATA_RATE_LIMIT_PER_MINUTE: "100000000",
    MARKET_DATA_METRICS_PORT: "0"
  }
  const run = async (url: string, headers: Record<string, string>, duration = seconds) => {
    await autocannon({ url, headers, connections, duration: 2 })
    return autocannon({ url, headers, connections, duration })
  }
  const row = (
    scenario: string,
    r: autocannon.Result,
    extra: Partial<Omit<MoneyRow, "scenario" | "rps" | "p50" | "p99" | "non2xx">> = {}
  ): MoneyRow => {
    const base = extra.against === undefined ? undefined : rows.find((x) => x.scenario === extra.against)
    const out: MoneyRow = {
      scenario,
      rps: Math.round(r.requests.average),
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx + r.errors,
      ...extra,
      ...(base === undefined || extra.ratio !== undefined
        ? {}
        : { ratio: Math.round((r.requests.average / base.rps) * 100) / 100 })
    }
    rows.push(out)
    deps.print(
      `${scenario.padEnd(46)} ${String(out.rps).padStart(7)} req/s  p50 ${out.p50} ms  p99 ${out.p99} ms  non-2xx ${out.non2xx}` +
        `${out.statementsPerRequest === undefined ? "" : `  ${out.statementsPerRequest} statements/request`}` +
        `${out.ratio === undefined ? "" : `  ${out.ratio}x ${out.against}${out.rounds === undefined ? "" : ` (median of ${out.rounds.length} rounds)`}`}\n`
    )
    return out
  }
  /**
   * The row of alternating rounds: the median round's latencies (by req/s), the median req/s, the median of the
   * rounds' ratios to their base (`bases`, the same rounds of the row `against`), the errors of every round.
   */
  const roundsRow = (
    scenario: string,
    results: ReadonlyArray<autocannon.Result>,
    bases: ReadonlyArray<number>,
    against: string,
    extra: Partial<Omit<MoneyRow, "scenario" | "rps" | "p50" | "p99" | "non2xx" | "ratio" | "rounds">> = {}
  ): MoneyRow => {
    const rounds = results.map((r, i) => ({
      rps: Math.round(r.requests.average),
      baseRps: Math.round(bases[i] as number),
      ratio: round2(r.requests.average / (bases[i] as number))
    }))
    const byRps = [...results].sort((a, b) => a.requests.average - b.requests.average)
    const mid = byRps[Math.floor((byRps.length - 1) / 2)] as autocannon.Result
    return row(
      scenario,
      {
        ...mid,
        requests: { ...mid.requests, average: median(results.map((r) => r.requests.average)) },
        non2xx: results.reduce((n, r) => n + r.non2xx, 0),
        errors: results.reduce((n, r) => n + r.errors, 0)
      },
      { ...extra, against, ratio: round2(median(rounds.map((x) => x.ratio))), rounds }
    )
  }

  // The bare anchor stays up until the memory rounds, which measure it again beside the paid `read`.
  const bare = await deps.launch(["bench/anchors.ts", "bare"], {})
  const bareRow = row("money: anchor bare node:http", await run(`${bare.url}/`, {}))
  const write = await deps.launch(["bench/anchors.ts", "write"], { DATABASE_URL: deps.scoped })
  const writeRow = row("money: anchor node:http + 1 UPDATE", await run(`${write.url}/`, {}))
  await write.stop()

  /** A paid `price` run on PostgreSQL, with the statements it sent (and the requests it answered). */
  const paidRunOnPostgres = async (s: Launched, headers: Record<string, string>) => {
    await autocannon({ url: `${s.url}/api/v1/price?id=crypto:bitcoin`, headers, connections, duration: 2 })
    const warmed = await statementsOf(s)
    const r = await autocannon({
      url: `${s.url}/api/v1/price?id=crypto:bitcoin`,
      headers,
      connections,
      duration: seconds
    })
    // The warm-up's statements are left out; the metrics scrape itself sends none.
    return { r, statements: (await statementsOf(s)) - warmed }
  }
  const perRequest = (statements: number, requests: number) =>
    requests === 0 ? Number.NaN : Math.round((statements / requests) * 1000) / 1000
  /** A paid `price` run on PostgreSQL, with the statements it sent per answered request. */
  const paidOnPostgres = async (scenario: string, s: Launched, headers: Record<string, string>, against: string) => {
    const { r, statements } = await paidRunOnPostgres(s, headers)
    return row(scenario, r, { against, statementsPerRequest: perRequest(statements, r.requests.total) })
  }

  const pgEnv = { ...env, DATABASE_URL: deps.scoped, DATABASE_POOL_SIZE: "10" }
  const grouped = await deps.launch(["test/support/serve-test-plane.ts"], pgEnv)
  const first = await fetch(`${grouped.url}/api/v1/read?id=crypto:bitcoin`, { headers: auth })
  await first.arrayBuffer()
  const etag = first.headers.get("etag") ?? ""
  // Paid, replay and 304 in alternating rounds on the one server.
  const paidRuns: Array<autocannon.Result> = []
  const replayRuns: Array<autocannon.Result> = []
  const notModifiedRuns: Array<autocannon.Result> = []
  let paidStatements = 0
  for (let i = 0; i < ROUNDS; i++) {
    const paid = await paidRunOnPostgres(grouped, auth)
    paidRuns.push(paid.r)
    paidStatements += paid.statements
    replayRuns.push(
      await run(`${grouped.url}/api/v1/price?id=crypto:bitcoin`, { ...auth, "idempotency-key": "bench-replay" })
    )
    notModifiedRuns.push(await run(`${grouped.url}/api/v1/read?id=crypto:bitcoin`, { ...auth, "if-none-match": etag }))
  }
  await grouped.stop()
  const writeRps = paidRuns.map(() => writeRow.rps)
  const paidRow = roundsRow("money: paid price, PostgreSQL, group commit", paidRuns, writeRps, writeRow.scenario, {
    statementsPerRequest: perRequest(
      paidStatements,
      paidRuns.reduce((n, r) => n + r.requests.total, 0)
    )
  })
  const paidRps = paidRuns.map((r) => r.requests.average)
  const replayRow = roundsRow("money: idempotent replay, PostgreSQL", replayRuns, paidRps, paidRow.scenario)
  const notModifiedRow = roundsRow("money: 304 read, PostgreSQL", notModifiedRuns, paidRps, paidRow.scenario)

  const lone = await deps.launch(["test/support/serve-test-plane.ts"], { ...pgEnv, DATABASE_BATCH_MAX: "1" })
  const loneRow = await paidOnPostgres("money: paid price, PostgreSQL, group commit off", lone, auth, writeRow.scenario)
  await lone.stop()

  // Bare anchor, the paid `read` of the service's own planes on memory (what `serve` runs, the 35-asset registry,
  // warm), the same `read` of the test plane, and the replay, in alternating rounds.
  const service = await deps.launch(["infra/src/bin.ts", "serve"], {
    ...env,
    DATABASE_URL: "memory",
    MARKET_DATA_SIM_UNIVERSE: "registry"
  })
  await deps.untilWarm(service.url, auth)
  const memory = await deps.launch(["test/support/serve-test-plane.ts"], { ...env, DATABASE_URL: "memory" })
  const bareRuns: Array<autocannon.Result> = []
  const serviceRuns: Array<autocannon.Result> = []
  const readRuns: Array<autocannon.Result> = []
  const memoryReplayRuns: Array<autocannon.Result> = []
  for (let i = 0; i < ROUNDS; i++) {
    bareRuns.push(await run(`${bare.url}/`, {}))
    serviceRuns.push(await run(`${service.url}/api/v1/read?id=crypto:bitcoin`, auth))
    readRuns.push(await run(`${memory.url}/api/v1/read?id=crypto:bitcoin`, auth))
    memoryReplayRuns.push(
      await run(`${memory.url}/api/v1/price?id=crypto:bitcoin`, { ...auth, "idempotency-key": "bench-replay" })
    )
  }
  await memory.stop()
  await service.stop()
  const bareRps = bareRuns.map((r) => r.requests.average)
  const serviceRow = roundsRow(
    "money: paid read, memory (the service's planes)",
    serviceRuns,
    bareRps,
    bareRow.scenario
  )
  const readRow = roundsRow("money: paid read, memory (test plane)", readRuns, bareRps, bareRow.scenario)
  const memoryReplay = roundsRow(
    "money: idempotent replay, memory",
    memoryReplayRuns,
    readRuns.map((r) => r.requests.average),
    readRow.scenario
  )

  // The embedded default (`npx market-data serve` with no database: PGlite, the 428-asset simulated market), its
  // paid `read` beside the bare anchor measured again right before it.
  const embeddedDir = await deps.tempDir()
  const embedded = await deps.launch(["infra/src/bin.ts", "serve"], { ...env, MARKET_DATA_DIR: embeddedDir })
  await deps.untilWarm(embedded.url, auth)
  const bareBeforeEmbedded = await run(`${bare.url}/`, {})
  const embeddedRun = await run(`${embedded.url}/api/v1/read?id=crypto:bitcoin`, auth)
  await embedded.stop()
  await bare.stop()
  const embeddedRow = roundsRow(
    "money: paid read, embedded default (PGlite)",
    [embeddedRun],
    [bareBeforeEmbedded.requests.average],
    bareRow.scenario
  )

  // Sustained paid load on PostgreSQL, then the server's RSS.
  const soakSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600)
  const soak = await deps.launch(["test/support/serve-test-plane.ts"], pgEnv)
  const soakRun = await autocannon({
    url: `${soak.url}/api/v1/price?id=crypto:bitcoin`,
    headers: auth,
    connections,
    duration: soakSeconds
  })
  const soakRssMb = deps.rssMb(soak.pid)
  row(`money: paid price, PostgreSQL, ${soakSeconds} s soak`, soakRun, { rssMb: soakRssMb })
  deps.print(`money: server RSS after ${soakSeconds} s of paid load on PostgreSQL: ${soakRssMb} MB\n`)
  await soak.stop()

  const loadAverage = (await import("node:os")).loadavg().map((x) => Math.round(x * 100) / 100)
  const targets: Array<MoneyTarget> = [
    {
      target: "paid price on PostgreSQL >= 1.0x the one-write anchor",
      measured: `${paidRow.ratio}x (${paidRow.rps} vs ${writeRow.rps} req/s)`,
      met: (paidRow.ratio ?? 0) >= 1
    },
    {
      target: "paid price p99 on PostgreSQL no worse than the anchor's",
      measured: `${paidRow.p99} ms vs ${writeRow.p99} ms`,
      met: paidRow.p99 <= writeRow.p99
    },
    {
      target: "statements per paid request <= 1 (well under 1 under load)",
      measured: `${paidRow.statementsPerRequest} with group commit, ${loneRow.statementsPerRequest} without`,
      met: (paidRow.statementsPerRequest ?? 2) <= 1
    },
    {
      target: "idempotent replay and 304 at least as fast as the paid path (PostgreSQL)",
      measured: `replay ${replayRow.ratio}x, 304 ${notModifiedRow.ratio}x the paid price`,
      met: (replayRow.ratio ?? 0) >= 1 && (notModifiedRow.ratio ?? 0) >= 1
    },
    {
      target: "paid read on memory, the service's planes, >= 0.55x bare node:http",
      measured: `${serviceRow.ratio}x (median of ${ROUNDS} alternating rounds; ${serviceRow.rps} vs ${Math.round(median(bareRps))} req/s); the test plane ${readRow.ratio}x`,
      met: (serviceRow.ratio ?? 0) >= 0.55
    },
    {
      target: "paid read on the embedded default (PGlite): reported beside the bare anchor",
      measured: `${embeddedRow.rps} req/s, p99 ${embeddedRow.p99} ms, ${embeddedRow.ratio}x bare node:http`,
      met: embeddedRow.non2xx === 0
    },
    {
      target: "idempotent replay at least as fast as the paid path (memory)",
      measured: `${memoryReplay.ratio}x the paid read`,
      met: (memoryReplay.ratio ?? 0) >= 1
    },
    {
      target: `server RSS after ${soakSeconds} s of paid load on PostgreSQL <= 500 MB (the target is for 600 s)`,
      measured: `${soakRssMb} MB`,
      met: soakRssMb <= 500
    }
  ]
  deps.print(`money targets (load average ${loadAverage.join(", ")}):\n`)
  for (const t of targets) deps.print(`  ${t.met ? "met    " : "NOT met"}  ${t.target}: ${t.measured}\n`)
  return { rows, targets, soakSeconds, soakRssMb, loadAverage }
}
