/**
 * Bad input never gets a 5xx: 10,000 random requests across every operation (random names, unicode, NUL,
 * overlong and empty values, repeats, malformed escapes), each answered with a typed error or a success.
 * The only 5xx allowed is the deliberate, documented 501 `not_implemented` of an operation whose plane has
 * not landed.
 */
import { ErrorBody, Operations } from "@market-data/core"
import { Schema } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NASTY_VALUES } from "./support/nasty-values.ts"
import { startServer, type TestServer } from "./support/server.ts"

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 10_000_000 })
  key = (await server.newKey(1_000, 10_000_000)).key
})
afterAll(() => server.close())

const isErrorBody = Schema.is(ErrorBody)

const NASTY = NASTY_VALUES

const encodedText = fc.string({ unit: "binary", maxLength: 40 }).map((s) => {
  try {
    return encodeURIComponent(s)
  } catch {
    return "%ED%A0%80"
  }
})
const value = fc.oneof(fc.constantFrom(...NASTY), encodedText)
const opNames = Operations.map((o) => o.name)
const paramNames = [...new Set(Operations.flatMap((o) => o.params.map((p) => p.name)))]
const name = fc.oneof(fc.constantFrom(...paramNames), fc.constantFrom(...paramNames), encodedText)
const pair = fc.tuple(name, value).map(([n, v]) => `${n}=${v}`)
const query = fc
  .array(fc.oneof(pair, pair, fc.constantFrom("", "=", "&", "id", "id=")), { maxLength: 6 })
  .map((a) => a.join("&"))
const request = fc.record({ op: fc.constantFrom(...opNames), query, withKey: fc.boolean() })

const CASES = 10_000

describe("fuzzed requests", () => {
  it(`answers ${CASES} random requests with typed 4xx or success, never an unexpected 5xx`, async () => {
    const samples = fc.sample(request, { numRuns: CASES, seed: 20261122 })
    const failures: Array<string> = []
    const statuses = new Map<number, number>()
    let next = 0
    const worker = async () => {
      while (next < samples.length) {
        const s = samples[next++] as (typeof samples)[number]
        const url = `${server.base}/api/v1/${s.op}?${s.query}`
        const res = await fetch(url, s.withKey ? { headers: { Authorization: `Bearer ${key}` } } : {})
        const text = await res.text()
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        const where = `${res.status} ${url.slice(0, 200)}`
        if (res.status >= 500) {
          const body = JSON.parse(text)
          if (!(res.status === 501 && body.error?.code === "not_implemented"))
            failures.push(`5xx: ${where} ${text.slice(0, 200)}`)
        }
        if (res.status >= 400) {
          let body: unknown
          try {
            body = JSON.parse(text)
          } catch {
            failures.push(`non-JSON error: ${where}`)
            continue
          }
          if (!isErrorBody(body)) failures.push(`error body off schema: ${where} ${text.slice(0, 200)}`)
        } else if (res.status !== 200 && res.status !== 304) {
          failures.push(`unexpected status: ${where}`)
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    expect(failures.slice(0, 20)).toEqual([])
    // The mix shows the requests reached every stage: successes, parameter errors, auth and 501s.
    for (const status of [200, 400, 401, 501]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(50)
    expect(statuses.get(429) ?? 0).toBe(0)
  }, 180_000)
})
