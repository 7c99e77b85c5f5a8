/**
 * An agent that watches one value and sleeps until it can change, instead of polling.
 *
 * Every per-asset answer carries freshness clocks: `as_of` (the moment the values describe), `status` and
 * `next_update_at`, the earliest time new data can exist. Asking before then cannot return anything new, so
 * this agent reads, prints what it sees, sleeps until `next_update_at` and reads again. It also:
 *
 * - sends the answer's `ETag` back as `If-None-Match`: when nothing changed the answer is `304`, no body, zero
 *   credits (the previous answer, and its `next_update_at`, still hold);
 * - on `429 rate_limited` waits the `Retry-After` seconds the server asks for, then retries;
 * - on `402 insufficient_credits` stops and says so: no retry can fix an empty balance;
 * - on a `next_update_at` that is not in the future (a stalled source: the service then answers `now`) backs
 *   off from 1 s, doubling to 60 s, rather than asking in a tight loop.
 *
 * Run it against a server (see examples/README.md):
 *
 *   BASE=http://127.0.0.1:8080 KEY=mdk_0123456789abcdefghijklmnopqrstuv node examples/agent-loop.ts
 *
 * Environment:
 *   BASE            service address (default http://127.0.0.1:8080)
 *   KEY             API key (required)
 *   OP              operation to watch: `read` (default) or a per-asset one such as `funding` or `price`
 *   ID              canonical asset ID (default crypto:bitcoin)
 *   CYCLES          stop after this many answers (200 or 304); default 0: run until stopped
 *   WAKE_MARGIN_MS  wake this long after next_update_at, so the source has written the new data (default 250)
 *   MAX_SLEEP_MS    a test/demo convenience: never sleep longer than this, even when next_update_at is further
 *                   away (the early read then costs nothing: it is a 304). Unset by default. Retry-After is
 *                   always obeyed in full.
 *
 * Each decision is one log line `<time> <event> key=value ...` (events: start, observed, not_modified,
 * rate_limited, retry, sleep, out_of_credits, done), followed by indented human lines. Exit code: 0 after
 * CYCLES answers, 1 on an unexpected answer, 2 on a missing or refused key, 3 when out of credits.
 */

const env = (name: string, fallback?: string): string | undefined => {
  const v = process.env[name]
  return v === undefined || v === "" ? fallback : v
}
const intEnv = (name: string, fallback: number | undefined): number | undefined => {
  const v = env(name)
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`${name} must be a whole number >= 0, got ${JSON.stringify(v)}`)
    process.exit(2)
  }
  return n
}

const BASE = (env("BASE", "http://127.0.0.1:8080") as string).replace(/\/+$/, "")
const KEY = env("KEY")
const OP = env("OP", "read") as string
const ID = env("ID", "crypto:bitcoin") as string
const CYCLES = intEnv("CYCLES", 0) as number
const WAKE_MARGIN_MS = intEnv("WAKE_MARGIN_MS", 250) as number
const MAX_SLEEP_MS = intEnv("MAX_SLEEP_MS", undefined)
const LATE_BACKOFF_START_MS = 1_000
const LATE_BACKOFF_MAX_MS = 60_000

if (KEY === undefined) {
  console.error("set KEY to an API key (mdk_...); see examples/README.md")
  process.exit(2)
}

/** One machine-readable decision line, then optional indented human lines. */
const log = (event: string, fields: Record<string, string | number | undefined>, ...human: Array<string>) => {
  const kv = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
  console.log([new Date().toISOString(), event, ...kv].join(" "))
  for (const line of human) console.log(`  ${line}`)
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Sleeps until the clock reads at least `untilMs` (a timer can fire a little early; never ask early). */
const sleepUntil = async (untilMs: number) => {
  for (let left = untilMs - Date.now(); left > 0; left = untilMs - Date.now()) {
    await new Promise((resolve) => setTimeout(resolve, left))
  }
}

/** A per-asset answer: the clocks every one carries, plus the operation's own fields. */
interface AssetAnswer {
  readonly asset_id: string
  readonly as_of: string
  readonly status: string
  readonly next_update_at: string
  readonly [field: string]: unknown
}

const num = (v: unknown): string => {
  if (typeof v === "number") return String(v)
  if (typeof v === "string") return v // exact decimals (equity) arrive as strings
  if (v !== null && typeof v === "object" && "value" in v) {
    const c = v as { value: number; pctl?: number }
    return c.pctl === undefined ? String(c.value) : `${c.value} (pctl ${c.pctl})`
  }
  return "n/a"
}

/** What a human (or the agent's next step) would look at in the answer. */
const describe = (a: AssetAnswer): Array<string> => {
  const lines = [`${a.asset_id}: status ${a.status}, as of ${a.as_of}`]
  const headline = a.headline as Record<string, unknown> | undefined
  const funding = a.funding as Record<string, unknown> | undefined
  if (headline !== undefined) {
    lines.push(
      `price ${num(headline.price_usd)} USD, 24h ${num(headline.return_24h_pct)} %` +
        (headline.trend_state === undefined ? "" : `, trend ${headline.trend_state}`)
    )
    if (headline.funding_rate_8h_pct !== undefined) lines.push(`funding 8h ${num(headline.funding_rate_8h_pct)} %`)
  } else if (funding !== undefined) {
    // `next_funding_at` is when rates settle; `next_update_at` (what this agent sleeps on) is when any input can change.
    lines.push(
      `funding 8h ${num(funding.rate_8h_pct)} %, band ${funding.funding_band}, next settlement ${funding.next_funding_at}`
    )
  } else if (a.usd !== undefined) {
    lines.push(`price ${num(a.usd)} USD, 24h ${num(a.return_24h_pct)} %`)
  }
  return lines
}

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly retryable: boolean }
}

const main = async (): Promise<number> => {
  const url = `${BASE}/api/v1/${encodeURIComponent(OP)}?id=${encodeURIComponent(ID)}`
  log("start", { op: OP, id: ID, cycles: CYCLES === 0 ? "unlimited" : CYCLES, max_sleep_ms: MAX_SLEEP_MS })

  let etag: string | undefined
  let nextUpdateAtMs: number | undefined
  let answers = 0
  let lateBackoffMs = LATE_BACKOFF_START_MS

  for (;;) {
    const headers: Record<string, string> = { Authorization: `Bearer ${KEY}` }
    if (etag !== undefined) headers["If-None-Match"] = etag
    const res = await fetch(url, { headers })
    const charged = res.headers.get("x-credits-charged") ?? "0"

    if (res.status === 200) {
      const answer = ((await res.json()) as { data: AssetAnswer }).data
      etag = res.headers.get("etag") ?? undefined
      nextUpdateAtMs = Date.parse(answer.next_update_at)
      answers++
      log("observed", { status: 200, charged, etag, next_update_at: answer.next_update_at }, ...describe(answer))
    } else if (res.status === 304) {
      // Nothing changed: the last answer (and its next_update_at) still holds. Zero credits.
      answers++
      log("not_modified", { status: 304, charged, etag }, "unchanged since the last answer")
    } else {
      const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined
      const code = body?.error?.code ?? "unknown"
      const message = body?.error?.message ?? res.statusText
      if (res.status === 429 || (res.status === 503 && body?.error?.retryable === true)) {
        // The rate limit (or a source outage) says when to come back: obey it in full, never cap it.
        const seconds = Number(res.headers.get("retry-after") ?? "1")
        const waitMs = (Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000
        const until = Date.now() + waitMs
        log(res.status === 429 ? "rate_limited" : "retry", { status: res.status, code, retry_after_s: seconds })
        log("sleep", { until: iso(until), ms: waitMs, reason: "retry_after" })
        await sleepUntil(until)
        continue
      }
      if (res.status === 402) {
        log(
          "out_of_credits",
          { status: 402, code },
          message,
          "top the key up (market-data credits grant) and start again"
        )
        return 3
      }
      if (res.status === 401) {
        log("refused", { status: 401, code }, message)
        return 2
      }
      log("error", { status: res.status, code }, message)
      return 1
    }

    if (CYCLES > 0 && answers >= CYCLES) {
      log("done", { answers })
      return 0
    }

    // Plan the next read: at next_update_at (plus a small margin), not a fixed polling interval.
    const now = Date.now()
    let until: number
    let reason: string
    if (nextUpdateAtMs === undefined || Number.isNaN(nextUpdateAtMs)) {
      // No clock to go on (should not happen on per-asset answers): fall back to the Cache-Control max-age.
      const maxAge = /max-age=(\d+)/.exec(res.headers.get("cache-control") ?? "")?.[1]
      until = now + (maxAge === undefined ? LATE_BACKOFF_START_MS : Number(maxAge) * 1000)
      reason = "max_age"
    } else if (nextUpdateAtMs <= now) {
      // The source is stalled or late: nothing says when new data will come. Back off instead of hammering.
      until = now + lateBackoffMs
      reason = "late"
      lateBackoffMs = Math.min(lateBackoffMs * 2, LATE_BACKOFF_MAX_MS)
    } else {
      until = nextUpdateAtMs + WAKE_MARGIN_MS
      reason = "next_update_at"
      lateBackoffMs = LATE_BACKOFF_START_MS
    }
    if (MAX_SLEEP_MS !== undefined && until - now > MAX_SLEEP_MS) {
      until = now + MAX_SLEEP_MS
      reason = "max_sleep"
    }
    log("sleep", {
      until: iso(until),
      ms: until - now,
      reason,
      next_update_at: nextUpdateAtMs === undefined ? undefined : iso(nextUpdateAtMs)
    })
    await sleepUntil(until)
  }
}

try {
  process.exitCode = await main()
} catch (e) {
  console.error(`agent-loop: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
}
