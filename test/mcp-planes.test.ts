/**
 * MCP against the real planes: one server with the simulated crypto market and the simulated filings (as
 * `serve` runs by default), driven over HTTP and over MCP. For every one of the 23 operations, on both planes,
 * with the docs' example requests, a batch per batch operation (`ids` as an array and as a comma-joined
 * string, with refused assets), every tier's `not_covered` refusals and the `plane_mismatch` ones:
 *
 * - the same call over HTTP and MCP gives byte-identical data and charges the same credits
 *   (`X-Credits-Charged` = `_meta.credits_charged`), successes and refusals alike;
 * - the data source is reported alike (`X-Data-Source` = `_meta.data_source`);
 * - every `structuredContent` validates against its tool's `outputSchema` from `tools/list` (ajv, 2020-12, strict).
 *
 * The market ticks on the real clock (venue books every 20 to 60 s, bars every 15 min) and a few fields follow
 * the clock itself (`coverage`'s `lag_seconds`, to the second), so each MCP call is sandwiched between two HTTP
 * calls: when the two HTTP answers are byte-identical nothing moved in between, and the MCP answer must be
 * byte-identical to them; when they differ the triple is retried after a pause. Only `usage`'s rate window is
 * compared apart (every call spends a unit, so it differs by construction).
 */

import {
  docsExamples,
  type OperationSpec,
  Operations,
  type ParamSpec,
  type Plane,
  type Tier,
  TierPlane,
  Tiers,
  tierServes
} from "@market-data/core"
import type { ValidateFunction } from "ajv"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { callTool, listToolsWithOutputSchemas, makeAjv, sdkClient, typedArgs } from "./support/mcp.ts"
import { type PlanesServer, startPlanesServer } from "./support/planes-server.ts"

let server: PlanesServer
let key: string
const validators = new Map<string, ValidateFunction>()
/** The same schemas closed (`additionalProperties: true` made false): no answer carries an undeclared field. */
const closedValidators = new Map<string, ValidateFunction>()
/** The assets of each coverage tier, from the service's own `coverage` listing. */
const byTier = new Map<Tier, Array<string>>()

/** A schema with every open object closed; maps (`additionalProperties: {schema}`) are left alone. */
const closed = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(closed)
  if (typeof node !== "object" || node === null) return node
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === "additionalProperties" && v === true ? false : closed(v)])
  )
}

const auth = (k = key) => ({ Authorization: `Bearer ${k}` })

beforeAll(async () => {
  // Keyless calls (docs, schema) share the client address's budget: raise the default.
  server = await startPlanesServer({ rateLimitPerMinute: 1_000_000 })
  key = (await server.newKey(10_000_000, 1_000_000)).key
  // The schemas a client gets: from tools/list over MCP (asking for the output schemas), not from the module.
  const list = await listToolsWithOutputSchemas(server.base)
  const ajv = makeAjv()
  const closedAjv = makeAjv()
  for (const t of list.body.result.tools as ReadonlyArray<{ name: string; outputSchema: object }>) {
    validators.set(t.name, ajv.compile(t.outputSchema))
    closedValidators.set(t.name, closedAjv.compile(closed(t.outputSchema) as object))
  }
  let cursor: string | null = null
  do {
    const res = await fetch(
      `${server.base}/api/v1/coverage?limit=500${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
      { headers: auth() }
    )
    const page = (await res.json()) as {
      data: { rows: ReadonlyArray<{ asset_id: string; tier: Tier }>; next_cursor: string | null }
    }
    for (const row of page.data.rows) byTier.set(row.tier, [...(byTier.get(row.tier) ?? []), row.asset_id])
    cursor = page.data.next_cursor
  } while (cursor !== null)
}, 180_000)
afterAll(() => server?.close())

interface HttpAnswer {
  readonly status: number
  readonly text: string
  readonly charged: number
  readonly source: string | undefined
}

const httpCall = async (op: string, query: string, k: string): Promise<HttpAnswer> => {
  const res = await fetch(`${server.base}/api/v1/${op}${query === "" ? "" : `?${query}`}`, { headers: auth(k) })
  return {
    status: res.status,
    text: await res.text(),
    charged: Number(res.headers.get("x-credits-charged") ?? 0),
    source: res.headers.get("x-data-source") ?? undefined
  }
}

/**
 * `usage` spends a rate unit per call, so its `rate_limit.remaining` (and the window's `reset_at`) moves
 * with every call, whatever the transport: the one part of any answer that legitimately differs. It is
 * compared apart; everything else is compared byte for byte.
 */
const comparable = (op: string, text: string): string => {
  if (op !== "usage") return text
  const body = JSON.parse(text)
  if (body.data?.rate_limit !== undefined) {
    body.data.rate_limit = { limit: body.data.rate_limit.limit }
  }
  return JSON.stringify(body)
}

/** Where two answers first differ, with some context, for a failure message. */
const firstDifference = (a: string, b: string): string => {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return `…${a.slice(Math.max(0, i - 80), i + 40)}… vs …${b.slice(Math.max(0, i - 80), i + 40)}…`
}

/** How many HTTP/MCP pairs were checked, and how often the market moved inside a triple. */
let pairs = 0
let retries = 0

/** `usage`'s rate units: each call spends one, so the MCP call sits strictly between the two HTTP calls. */
const rateRemaining = (text: string): number => JSON.parse(text).data.rate_limit.remaining

interface Checked {
  readonly http: HttpAnswer
  readonly result: any
}

/** Calls `op` over HTTP (`query`) and MCP (`args`) and checks parity, charge, source and the output schema. */
const check = async (op: string, query: string, args: Record<string, unknown>, own?: string): Promise<Checked> => {
  const label = `${op}?${query} as ${JSON.stringify(args)}`
  let moved = ""
  for (let attempt = 0; attempt < 8; attempt++) {
    // `usage` on a key with no history: its rate window only fills during these three calls.
    const k = own ?? (op === "usage" ? (await server.newKey(100, 1_000_000)).key : key)
    const before = await httpCall(op, query, k)
    const { reply, result } = await callTool(server.base, op, args, auth(k))
    const after = await httpCall(op, query, k)
    if (comparable(op, before.text) !== comparable(op, after.text)) {
      // The market ticked in between: again, after a pause that outlasts a tick's writes (up to 2 s).
      retries++
      moved = firstDifference(comparable(op, before.text), comparable(op, after.text))
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 250 * 2 ** attempt)))
      continue
    }
    pairs++
    const http = before
    expect(reply.status, label).toBe(200)
    expect(result, `${label}: ${reply.text.slice(0, 300)}`).toBeDefined()
    expect(after.charged, label).toBe(http.charged)
    // The same charge, for successes and refusals alike.
    expect(result._meta.credits_charged, label).toBe(http.charged)
    // The same source, reported only where HTTP reports it.
    expect(result._meta.data_source, label).toBe(http.source)
    expect(result.isError, `${label}: ${http.text.slice(0, 300)}`).toBe(http.status !== 200)
    if (op === "docs") {
      expect(result.structuredContent.data.markdown, label).toBe(http.text)
      expect(result.content).toEqual([{ type: "text", text: http.text }])
    } else {
      // The same data, byte for byte: the text content is the HTTP body, structuredContent its parse.
      expect(comparable(op, result.content[0].text), label).toBe(comparable(op, http.text))
      expect(result.structuredContent, label).toEqual(JSON.parse(result.content[0].text))
    }
    if (op === "usage" && http.status === 200) {
      const mcp = rateRemaining(result.content[0].text)
      expect(mcp).toBeLessThan(rateRemaining(before.text))
      expect(mcp).toBeGreaterThan(rateRemaining(after.text))
    }
    const validate = validators.get(op)
    expect(validate, op).toBeDefined()
    expect(validate?.(result.structuredContent), `${label}: ${JSON.stringify(validate?.errors)}`).toBe(true)
    // The schemas admit additive fields; still, every field served today is one the schema declares.
    const strictly = closedValidators.get(op)
    expect(strictly?.(result.structuredContent), `${label}: ${JSON.stringify(strictly?.errors)}`).toBe(true)
    return { http, result }
  }
  throw new Error(`${label}: two HTTP calls in a row kept answering differently, last at ${moved}`)
}

/** Checks one call whose `ids` go over MCP both as an array and as one comma-joined string. */
const checkIds = async (op: string, query: string, extra: Record<string, unknown> = {}): Promise<Checked> => {
  const args = { ...typedArgs(query), ...extra }
  const asArray = await check(op, query, args)
  expect(Array.isArray(args.ids), query).toBe(true)
  // Each form is compared with its own HTTP call (the market may tick between the two forms).
  const joined = await check(op, query, { ...args, ids: (args.ids as ReadonlyArray<string>).join(",") })
  expect(joined.http.status).toBe(asArray.http.status)
  return asArray
}

const queryOf = (params: Record<string, string>): string =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join("&")

const dataOps = Operations.filter((o) => o.group !== "discovery")
const tierOf = (plane: Plane): Tier => (plane === "crypto" ? "core" : "full")
const assetOf = (tier: Tier, n = 0): string => {
  const id = byTier.get(tier)?.[n]
  if (id === undefined) throw new Error(`no asset #${n} of tier ${tier} in coverage`)
  return id
}
/** A call operation without `id` (rank) has no per-asset refusals. */
const takesId = (op: OperationSpec) => op.params.some((p) => p.name === "id")

/** Which tiers' not_covered refusals were exercised, by the file's end every tier that has one. */
const notCoveredSeen = new Set<Tier>()
const sourcesSeen = new Set<string>()

describe("MCP and HTTP agree on the real planes", () => {
  it("serves the simulated feed and lists 23 tools, each with an outputSchema that compiled", () => {
    expect(server.feedDescription).toContain("simulated")
    expect(validators.size).toBe(23)
    expect([...validators.keys()]).toEqual(Operations.map((o) => o.name))
    expect([...byTier.keys()].sort()).toEqual(Tiers.filter((t) => t !== "equity").sort())
  })

  for (const op of Operations) {
    it(`${op.name}: same data, charge and source over HTTP and MCP; structuredContent matches outputSchema`, async () => {
      // 1. Every example request the docs show for it (any section), with typed arguments.
      const examples = docsExamples.filter((e) => e.operation === op.name)
      expect(examples.length, op.name).toBeGreaterThan(0)
      const seen = new Set<string>()
      for (const e of examples) {
        if (seen.has(e.query)) continue
        seen.add(e.query)
        const { http } = e.query.includes("ids=")
          ? await checkIds(op.name, e.query)
          : await check(op.name, e.query, typedArgs(e.query))
        expect(http.status, `${op.name}?${e.query}: ${http.text.slice(0, 300)}`).toBe(200)
        if (op.group !== "discovery") {
          expect(http.source).toBe("simulated")
          sourcesSeen.add(op.name)
        }
      }
      if (op.group === "discovery" || !takesId(op)) return

      // 2. One served asset on each plane the operation serves; an asset of any other plane is plane_mismatch.
      for (const plane of ["crypto", "equity"] as const) {
        const id = assetOf(tierOf(plane))
        const { http } = await check(op.name, `id=${id}`, { id })
        if (op.planes.includes(plane)) {
          expect(http.status, `${op.name} ${id}: ${http.text.slice(0, 300)}`).toBe(200)
          expect(http.charged).toBeGreaterThan(0)
        } else {
          expect(http.status).toBe(422)
          expect(JSON.parse(http.text).error.code).toBe("plane_mismatch")
          expect(http.charged).toBe(0)
        }
      }

      // An unknown asset is refused alike, at no charge.
      const unknown = await check(op.name, "id=crypto:no-such-asset", { id: "crypto:no-such-asset" })
      expect(unknown.result.structuredContent.error.code).toBe("unknown_asset")
      expect(unknown.http.charged).toBe(0)

      // 3. Every tier that does not serve it refuses not_covered, at no charge.
      for (const tier of byTier.keys()) {
        if (!op.planes.includes(TierPlane[tier]) || tierServes(tier, op.name)) continue
        const id = assetOf(tier)
        const { http, result } = await check(op.name, `id=${id}`, { id })
        expect(http.status, `${op.name} ${id} (${tier})`).toBe(422)
        expect(result.structuredContent.error.code).toBe("not_covered")
        expect(result._meta.credits_charged).toBe(0)
        notCoveredSeen.add(tier)
      }

      // 4. A batch: served assets of every plane it serves, then refused ones (unknown, not covered, other
      //    plane), with `ids` as an array and as a comma-joined string.
      if (!op.batch) return
      const served = op.planes.flatMap((p) =>
        p === "crypto" ? [assetOf("core"), assetOf("core", 1)] : [assetOf("full"), assetOf("full", 1)]
      )
      const notCovered = [...byTier.keys()].find((t) => op.planes.includes(TierPlane[t]) && !tierServes(t, op.name))
      const otherPlane = (["crypto", "equity"] as const).find((p) => !op.planes.includes(p))
      const refused = [
        "crypto:no-such-asset",
        ...(notCovered === undefined ? [] : [assetOf(notCovered)]),
        ...(otherPlane === undefined ? [] : [assetOf(tierOf(otherPlane))])
      ]
      const ids = [...served, ...refused]
      const { http, result } = await checkIds(op.name, queryOf({ ids: ids.join(",") }))
      expect(http.status, http.text.slice(0, 300)).toBe(200)
      const body = result.structuredContent
      expect(body.data.map((d: { asset_id: string }) => d.asset_id)).toEqual(served)
      expect(body.refused).toEqual([
        { id: "crypto:no-such-asset", reason: "unknown_asset" },
        ...(notCovered === undefined ? [] : [{ id: assetOf(notCovered), reason: "not_covered" }]),
        ...(otherPlane === undefined ? [] : [{ id: assetOf(tierOf(otherPlane)), reason: "plane_mismatch" }])
      ])
      expect(result._meta.data_source).toBe("simulated")

      // A batch whose every asset is refused costs nothing, over both transports.
      const none = await checkIds(op.name, queryOf({ ids: refused.concat("crypto:another-no-such").join(",") }))
      expect(none.http.charged).toBe(0)
    })
  }

  it("exercised the not_covered refusal of every tier that refuses something", () => {
    const refusing = [...byTier.keys()].filter((t) =>
      dataOps.some((op) => takesId(op) && op.planes.includes(TierPlane[t]) && !tierServes(t, op.name))
    )
    expect(refusing.length).toBeGreaterThanOrEqual(4)
    expect([...notCoveredSeen].sort()).toEqual(refusing.sort())
    // Every data operation's examples answered from the simulated source.
    expect([...sourcesSeen].sort()).toEqual(dataOps.map((o) => o.name).sort())
    // Real coverage, and the market seldom moved inside a triple (it ticks every 20 s at the fastest).
    expect(pairs).toBeGreaterThan(120)
    expect(retries).toBeLessThan(pairs / 10)
  })
})

/**
 * Representative values of one parameter: every value of an enum, each value of a list alone, an int's bounds,
 * `true`, a date a year back. Identifiers and cursors are exercised elsewhere.
 */
const valuesOf = (p: ParamSpec): ReadonlyArray<string> => {
  const t = p.type
  switch (t.kind) {
    case "enum":
    case "enumList":
      return t.values
    case "int":
      return [String(t.min), String(t.max)]
    case "boolean":
      return ["true"]
    case "date":
      return [new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10)]
    default:
      return []
  }
}

describe("MCP and HTTP agree on every parameter value, and on pages", () => {
  for (const op of dataOps) {
    it(`${op.name}: each parameter value on each plane it serves, as id and as ids`, async () => {
      const swept = op.params.filter((p) => valuesOf(p).length > 0)
      const subjects: Array<Record<string, string>> = takesId(op)
        ? op.planes.map((plane) => ({ id: assetOf(tierOf(plane)) }))
        : [{}]
      // A batch across every plane the operation serves: a plane-specific parameter applies to each alike.
      if (op.batch)
        subjects.push({
          ids: op.planes
            .map((plane) => assetOf(tierOf(plane)))
            .concat(assetOf("core", 1))
            .join(",")
        })
      let answered = 0
      for (const subject of subjects) {
        for (const p of swept) {
          for (const value of valuesOf(p)) {
            const query = queryOf({ ...subject, [p.name]: value })
            const { http } =
              subject.ids === undefined ? await check(op.name, query, typedArgs(query)) : await checkIds(op.name, query)
            if (http.status === 200) answered++
          }
        }
      }
      // Most values answer (the rest are cross-rule refusals, compared all the same).
      if (swept.length > 0) expect(answered, op.name).toBeGreaterThan(0)
    })
  }

  for (const op of Operations.filter((o) => o.params.some((p) => p.type.kind === "cursor"))) {
    it(`${op.name}: the next page, by the cursor the first page gave, is the same over both transports`, async () => {
      const first: Record<string, string> =
        op.name === "rank"
          ? { limit: "3" }
          : op.name === "coverage"
            ? { plane: "crypto", limit: "5" }
            : op.name === "holders"
              ? { id: assetOf("full"), limit: "2" }
              : op.name === "events"
                ? { id: assetOf("full"), limit: "2" }
                : { id: assetOf("core"), limit: "5" }
      let query = queryOf(first)
      let pages = 0
      for (; pages < 3; pages++) {
        const { http } = await check(op.name, query, typedArgs(query))
        expect(http.status, `${op.name}?${query}: ${http.text.slice(0, 300)}`).toBe(200)
        const next = JSON.parse(http.text).data.next_cursor as string | null
        if (next === null) break
        query = `${queryOf(first)}&cursor=${encodeURIComponent(next)}`
      }
      // At least one page was reached by a cursor.
      expect(pages, op.name).toBeGreaterThanOrEqual(1)
    })
  }
})

describe("the data source over MCP", () => {
  it("is _meta.data_source on data answers, mirrors X-Data-Source, and is absent elsewhere", async () => {
    const price = await check("price", "id=crypto:bitcoin", { id: "crypto:bitcoin" })
    expect(price.http.source).toBe("simulated")
    expect(price.result._meta).toEqual({ credits_charged: 1, data_source: "simulated" })
    const own = await server.newKey(5, 1_000_000)
    const usage = await check("usage", "", {}, own.key)
    expect(usage.result._meta).toEqual({ credits_charged: 0 })
    expect(usage.result.structuredContent.data).toMatchObject({ key_id: own.id, credits_remaining: 5 })
    const refused = await check("funding", "id=eq:9990001:ALDR", { id: "eq:9990001:ALDR" })
    expect(refused.result.isError).toBe(true)
    expect(refused.result._meta).toEqual({ credits_charged: 0 })
  })

  it("is kept on an idempotent replay, over MCP after HTTP", async () => {
    const idem = { "Idempotency-Key": `mcp-planes-${Date.now()}` }
    const http = await fetch(`${server.base}/api/v1/read?id=crypto:bitcoin`, { headers: { ...auth(), ...idem } })
    const httpText = await http.text()
    expect(http.headers.get("x-data-source")).toBe("simulated")
    const { result } = await callTool(server.base, "read", { id: "crypto:bitcoin" }, { ...auth(), ...idem })
    expect(result._meta).toEqual({
      credits_charged: Number(http.headers.get("x-credits-charged")),
      data_source: "simulated",
      idempotent_replayed: true
    })
    expect(result.content[0].text).toBe(httpText)
  })
})

describe("the official SDK client on the real planes", () => {
  it("calls every example the docs show; the client's own outputSchema validation accepts every result", async () => {
    const { client } = await sdkClient(server.base, "2025-11-25", key, true)
    try {
      const { tools } = await client.listTools() // the client validates structuredContent against these schemas
      expect(tools.every((t) => t.outputSchema?.type === "object")).toBe(true)
      for (const e of docsExamples) {
        const res = await client.callTool({ name: e.operation, arguments: typedArgs(e.query) })
        expect(res.isError, `${e.operation}?${e.query}`).toBe(false)
        if (Operations.find((o) => o.name === e.operation)?.group !== "discovery") {
          expect(res._meta?.data_source, e.operation).toBe("simulated")
        }
      }
      // A refusal too: an error result is checked against the same outputSchema.
      const refused = await client.callTool({ name: "funding", arguments: { id: assetOf("full") } })
      expect(refused.isError).toBe(true)
      expect((refused.structuredContent as { error: { code: string } }).error.code).toBe("plane_mismatch")
    } finally {
      await client.close()
    }
  })
})
