/**
 * The whole service on its default simulated feed, through the embedded library (the same pipeline as HTTP):
 * every example request the docs show answers, every data operation answers every tier it serves with a
 * result that decodes against the registry's result schema, refuses the tiers it does not serve, and every
 * answer says its data is simulated. One service for the file: the simulated year takes seconds to generate.
 */

import {
  docsExamples,
  type OperationSpec,
  Operations,
  Results,
  type Tier,
  TierOperations,
  tierServes
} from "@market-data/core"
import { createMarketData, type MarketDataClient } from "@market-data/embedded"
import { DefaultSimulatedCompanies } from "@market-data/infra"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const KEY = `mdk_${"Plane".repeat(6)}XY`
let md: MarketDataClient

beforeAll(async () => {
  // The default universe of simulated companies, whatever the test environment sets.
  md = await createMarketData({
    apiKey: KEY,
    ensureCredits: 1_000_000,
    rateLimitPerMinute: 100_000,
    simulatedCompanies: DefaultSimulatedCompanies
  })
}, 120_000)
afterAll(() => md?.close())

const paramsOf = (query: string): Record<string, string> =>
  Object.fromEntries(
    query
      .split("&")
      .filter((p) => p !== "")
      .map((p) => {
        const i = p.indexOf("=")
        return [decodeURIComponent(p.slice(0, i)), decodeURIComponent(p.slice(i + 1))]
      })
  )

const envelopeOf = (op: OperationSpec, batch: boolean): Schema.Top =>
  batch ? Results.batch(op.result) : Results.single(op.result)

const decodes = (op: OperationSpec, body: unknown, batch = false): void => {
  const result = Schema.decodeUnknownExit(envelopeOf(op, batch) as Schema.Codec<unknown, unknown>)(body)
  if (result._tag === "Failure") {
    throw new Error(`${op.name}: the answer does not match its result schema: ${String(result.cause)}`)
  }
}

/** One asset per tier, from the service's own coverage listing. */
const assetsByTier = async (): Promise<Map<Tier, string>> => {
  const out = new Map<Tier, string>()
  let cursor: string | undefined
  do {
    const page = (await md.coverage({ limit: 500, ...(cursor === undefined ? {} : { cursor }) })) as unknown as {
      data: { rows: ReadonlyArray<{ asset_id: string; tier: Tier }>; next_cursor: string | null }
    }
    for (const row of page.data.rows) if (!out.has(row.tier)) out.set(row.tier, row.asset_id)
    cursor = page.data.next_cursor ?? undefined
  } while (cursor !== undefined)
  return out
}

/** Every equity row of the coverage listing. */
const equityRows = async (): Promise<ReadonlyArray<{ asset_id: string; symbol: string; tier: Tier }>> => {
  const out: Array<{ asset_id: string; symbol: string; tier: Tier }> = []
  let cursor: string | undefined
  do {
    const page = (await md.coverage({
      plane: "equity",
      limit: 500,
      ...(cursor === undefined ? {} : { cursor })
    })) as unknown as {
      data: { rows: ReadonlyArray<{ asset_id: string; symbol: string; tier: Tier }>; next_cursor: string | null }
    }
    out.push(...page.data.rows)
    cursor = page.data.next_cursor ?? undefined
  } while (cursor !== undefined)
  return out
}

/** `n` rows spread evenly over the list (the same ones every run). */
const sampleOf = <A>(rows: ReadonlyArray<A>, n: number): ReadonlyArray<A> =>
  Array.from({ length: Math.min(n, rows.length) }, (_, i) => rows[Math.floor((i * rows.length) / n)]!)

describe("the service on the simulated feed", () => {
  it("answers every example request the docs show", async () => {
    for (const e of docsExamples) {
      const r = await md.call(e.operation, paramsOf(e.query))
      expect(r.status, `${e.operation}?${e.query}: ${r.text.slice(0, 300)}`).toBe(200)
    }
  })

  it("covers every tier the contract names, the equity tier by the generated companies without prices", async () => {
    const tiers = await assetsByTier()
    expect([...tiers.keys()].sort()).toEqual(
      ["contract_token", "core", "discovery_only", "equity", "full", "listed_token", "prices_only"].sort()
    )
  })

  it("lists at least 500 simulated equity assets, each resolvable by its ticker", async () => {
    const rows = await equityRows()
    expect(rows.length).toBeGreaterThanOrEqual(500)
    expect(new Set(rows.map((r) => r.asset_id)).size).toBe(rows.length)
    for (const row of sampleOf(rows, 25)) {
      const r = await md.call("resolve", { q: row.symbol })
      expect(r.status, r.text.slice(0, 300)).toBe(200)
      const body = r.body as { data: { best: { asset_id: string } | null } }
      expect(body.data.best?.asset_id, `${row.symbol}: ${r.text.slice(0, 300)}`).toBe(row.asset_id)
    }
  })

  it("answers every equity operation on a sample of the generated companies of both tiers", async () => {
    const rows = (await equityRows()).filter((r) => !r.asset_id.startsWith("eq:99900"))
    const sample = [
      ...sampleOf(
        rows.filter((r) => r.tier === "full"),
        12
      ),
      ...sampleOf(
        rows.filter((r) => r.tier === "equity"),
        4
      )
    ]
    expect(sample.length).toBe(16)
    const equityOps = Operations.filter(
      (o) => (o.group === "situation" || o.group === "domain" || o.name === "series") && o.planes.includes("equity")
    )
    for (const row of sample) {
      for (const op of equityOps) {
        const r = await md.call(op.name, { id: row.asset_id })
        const label = `${op.name} on ${row.asset_id} (${row.tier}): ${r.text.slice(0, 300)}`
        if (tierServes(row.tier, op.name)) {
          expect(r.status, label).toBe(200)
          decodes(op, r.body)
          expect(r.dataSource, label).toBe("simulated")
        } else {
          expect(r.status, label).toBe(422)
          expect((r.body as { error: { code: string } }).error.code, label).toBe("not_covered")
        }
      }
      const holders = await md.call("holders", { id: row.asset_id })
      expect((holders.body as { data: { holders: ReadonlyArray<unknown> } }).data.holders.length).toBeGreaterThan(0)
      const events = await md.call("events", { id: row.asset_id, types: "insider" })
      expect((events.body as { data: { events: ReadonlyArray<unknown> } }).data.events.length).toBeGreaterThan(0)
    }
  })

  it("answers each data operation for every tier it serves, decoding against its schema, and refuses the rest", async () => {
    const tiers = await assetsByTier()
    const dataOps = Operations.filter((o) => o.group === "situation" || o.group === "domain" || o.name === "series")
    for (const op of dataOps) {
      for (const [tier, id] of tiers) {
        const r = await md.call(op.name, { id })
        const label = `${op.name} on ${id} (${tier}): ${r.text.slice(0, 300)}`
        if (!op.planes.includes(tier === "full" || tier === "equity" ? "equity" : "crypto")) {
          expect(r.status, label).toBe(422)
          expect((r.body as { error: { code: string } }).error.code, label).toBe("plane_mismatch")
        } else if (tierServes(tier, op.name)) {
          expect(r.status, label).toBe(200)
          decodes(op, r.body)
          expect(r.dataSource, label).toBe("simulated")
          expect(r.creditsCharged, label).toBeGreaterThan(0)
        } else {
          expect(r.status, label).toBe(422)
          expect((r.body as { error: { code: string } }).error.code, label).toBe("not_covered")
          expect(r.creditsCharged, label).toBe(0)
        }
      }
    }
    expect(TierOperations.core.length).toBeGreaterThan(0)
  })

  it("answers the equity list operations and rank, decoding against their schemas", async () => {
    const equity = "eq:9990001:ALDR"
    for (const [name, params] of [
      ["financials", { id: equity, period_kind: "quarter", periods: 8, basis_concepts: true }],
      ["events", { id: equity }],
      ["holders", { id: equity }],
      ["series", { id: equity, view: "summary", range: "1y" }],
      ["series", { id: "crypto:bitcoin", limit: 500, interval: "15m", range: "1w" }],
      ["rank", { limit: 50 }]
    ] as const) {
      const op = Operations.find((o) => o.name === name) as OperationSpec
      const r = await md.call(name, params)
      expect(r.status, `${name}: ${r.text.slice(0, 300)}`).toBe(200)
      decodes(op, r.body)
    }
  })

  it("refuses, uncharged, an equity series or technicals at an intraday interval (nothing to serve)", async () => {
    const before = (await md.usage()) as unknown as { data: { credits_remaining: number } }
    const series = await md.call("series", { id: "eq:9990001:ALDR", interval: "1h" })
    expect(series.status, series.text).toBe(422)
    expect((series.body as { error: { code: string; param: string } }).error).toMatchObject({
      code: "not_covered",
      param: "interval"
    })
    expect(series.creditsCharged).toBe(0)
    const mixed = await md.call("technicals", { ids: "crypto:bitcoin,eq:9990001:ALDR", timeframe: "4h" })
    expect(mixed.status, mixed.text).toBe(200)
    expect((mixed.body as { refused: unknown }).refused).toEqual([{ id: "eq:9990001:ALDR", reason: "not_covered" }])
    expect(mixed.creditsCharged).toBe(1)
    const after = (await md.usage()) as unknown as { data: { credits_remaining: number } }
    expect(before.data.credits_remaining - after.data.credits_remaining).toBe(1)
  })

  it("answers a batch across both planes in request order, refusing what it cannot serve", async () => {
    const r = await md.call("price", { ids: "crypto:bitcoin,eq:9990002:BWPC,crypto:nope,crypto:pi-network" })
    expect(r.status).toBe(200)
    const body = r.body as { data: ReadonlyArray<{ asset_id: string }>; refused: ReadonlyArray<{ id: string }> }
    expect(body.data.map((d) => d.asset_id)).toEqual(["crypto:bitcoin", "eq:9990002:BWPC"])
    expect(body.refused).toEqual([
      { id: "crypto:nope", reason: "unknown_asset" },
      { id: "crypto:pi-network", reason: "not_covered" }
    ])
    expect(r.creditsCharged).toBe(2)
    decodes(Operations.find((o) => o.name === "price") as OperationSpec, r.body, true)
  })
})
