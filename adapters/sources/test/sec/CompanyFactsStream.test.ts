/**
 * The streaming companyfacts reader against the whole-document parser (`parseCompanyFacts`, JSON.parse with exact
 * numbers): on the hand-made fixture, Apple's real document and generated documents, cut into pieces anywhere
 * (inside numbers, strings, escapes and multi-byte characters), it gives the same facts in the same order with the
 * same exact decimals, including documents only the reviver fallback reads; and it refuses what the whole parser
 * refuses, with the same message where the problem is inside a concept.
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import type { Fact } from "../../src/sec/EquityModel.ts"
import { CompanyFactsStream, parseCompanyFacts } from "../../src/sec/index.ts"
import { fixtureText, parsed, refused, sharedSecPresent, sharedSecText, sharedSuite } from "./Files.ts"

/** The document streamed in pieces cut at `cuts` (byte offsets): its facts, entity, and concepts seen one by one. */
const stream = (text: string, cuts: ReadonlyArray<number>) => {
  const bytes = Buffer.from(text, "utf8")
  const facts: Array<Fact> = []
  let batches = 0
  const reader = new CompanyFactsStream((concept) => {
    batches++
    facts.push(...concept)
  })
  const points = [...new Set([0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length])].sort((a, b) => a - b)
  for (let i = 0; i + 1 < points.length; i++) {
    const problem = reader.push(bytes.subarray(points[i], points[i + 1]))
    if (problem !== undefined) return { problem: problem.message, facts, batches }
  }
  const end = reader.end()
  if (!("cik" in end)) return { problem: end.message, facts, batches }
  return { problem: undefined, cik: end.cik, entityName: end.entityName, facts, batches }
}

type RowOf<A> = A extends fc.Arbitrary<infer R> ? R : never

/** Cuts every `size` bytes. */
const every = (text: string, size: number) =>
  Array.from({ length: Math.ceil(Buffer.byteLength(text) / size) }, (_, i) => i * size)

/** Streams `text` at several cut sizes and checks each against the whole-document parser. */
const sameAsWhole = (text: string, sizes: ReadonlyArray<number> = [1, 7, 4096, 1 << 30]) => {
  const whole = parsed(parseCompanyFacts(text))
  for (const size of sizes) {
    const got = stream(text, every(text, size))
    assert.strictEqual(got.problem, undefined, `pieces of ${size} bytes`)
    assert.strictEqual(got.cik, whole.cik)
    assert.strictEqual(got.entityName, whole.entityName)
    assert.deepStrictEqual(got.facts, whole.facts, `pieces of ${size} bytes`)
  }
  return whole
}

describe("CompanyFactsStream against parseCompanyFacts", () => {
  it("reads the hand-made fixture identically, cut anywhere, values exact", () => {
    const whole = sameAsWhole(fixtureText("companyfacts_small.json.raw"))
    assert.deepStrictEqual(
      whole.facts.map((f) => f.value),
      ["123456789012345678901234567890", "1000000000.10", "250000000", "0.30000000000000004", "-15", "9007199254740993"]
    )
  })

  it("emits one concept at a time, each when its last byte arrives", () => {
    const text = fixtureText("companyfacts_small.json.raw")
    const whole = parsed(parseCompanyFacts(text))
    const concepts = new Set(whole.facts.map((f) => `${f.taxonomy}|${f.concept}`)).size
    assert.strictEqual(stream(text, every(text, 3)).batches, concepts)
    // The first concept is out before the document's end: streaming, not buffering.
    const bytes = Buffer.from(text)
    const firstEnd = bytes.indexOf("}]}}") + 4
    let seen = 0
    const reader = new CompanyFactsStream(() => seen++)
    reader.push(bytes.subarray(0, firstEnd + 1))
    assert.strictEqual(seen, 1)
  })

  it("reads the fallback rows: numbers the fast path cannot take, exponents, numeric strings, a BOM, escapes", () => {
    // `\u0001` anywhere sends parseExactJson to JSON.parse's reviver (the fallback); values must not move.
    const text = `\ufeff{ "cik" : "0000320193" ,
      "entityName": "Caf\\u00e9 \u00e9l\u00e8ve \u{1F4C8} \\"Quoted\\" \\\\ Inc",
      "facts": {
        "us-gaap": {
          "Odd\\tName": {"label": "has \\u0001 inside", "units": {"USD": [
            {"end": "2024-12-31", "val": 1.5E+3, "accn": "0000320193-25-000001", "fy": 2024, "fp": "FY", "form": "10-K", "filed": "2025-01-30"},
            {"start": "2024-01-01", "end": "2024-12-31", "val": "-0.000000000000000000012345", "accn": "0000320193-25-000001", "fy": null, "form": "10-K", "filed": "2025-01-30", "frame": "CY2024"}
          ]}},
          "Plain": {"label": "plain", "units": {"USD/shares": [
            {"end": "2024-12-31", "val": 123456789012345678901234567890.123456789, "accn": "a", "form": "10-K", "filed": "2025-01-30"}
          ], "pure": []}}
        },
        "empty-taxonomy": {}
      },
      "extra": [1, 2.50, {"nested": [null, true]}]
    }  \n`
    const whole = sameAsWhole(text, [1, 2, 3, 5, 64, 1 << 30])
    assert.deepStrictEqual(
      whole.facts.map((f) => f.value),
      ["1500", "-0.000000000000000000012345", "123456789012345678901234567890.123456789"]
    )
    assert.strictEqual(whole.cik, "320193")
    assert.strictEqual(whole.entityName, 'Café élève \u{1F4C8} "Quoted" \\ Inc')
  })

  it("reads facts that come before the document names its company (held until it does)", () => {
    const text = `{"facts":{"dei":{"X":{"units":{"shares":[{"end":"2024-01-31","val":1000000.00,"accn":"a","form":"10-K","filed":"2024-02-20"}]}}}},"entityName":"Late Inc","cik":42}`
    const reader = new CompanyFactsStream(() => {})
    reader.push(Buffer.from(text.slice(0, 80)))
    assert.strictEqual(reader.header, undefined)
    sameAsWhole(text)
  })

  it("agrees on generated documents cut at random places", () => {
    const decimal = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/),
        fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined })
      )
      .map(([neg, int, frac]) => `${neg ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}`)
    const date = fc
      .tuple(fc.integer({ min: 1990, max: 2030 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
      .map(([y, m, d]) => `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`)
    const name = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 })
    const row = fc.record({
      start: fc.option(date, { nil: undefined }),
      end: date,
      val: decimal,
      quoted: fc.boolean(),
      accn: fc.stringMatching(/^[0-9]{10}-[0-9]{2}-[0-9]{6}$/),
      fy: fc.option(fc.integer({ min: 1990, max: 2030 }), { nil: undefined }),
      fp: fc.option(fc.constantFrom("FY", "Q1", "Q2", "Q3"), { nil: undefined }),
      form: fc.constantFrom("10-K", "10-Q", "8-K", "10-K/A"),
      filed: date,
      frame: fc.option(fc.stringMatching(/^CY[0-9]{4}(Q[1-4]I?)?$/), { nil: undefined })
    })
    const rowText = (r: RowOf<typeof row>) =>
      `{${[
        r.start === undefined ? undefined : `"start":${JSON.stringify(r.start)}`,
        `"end":${JSON.stringify(r.end)}`,
        `"val":${r.quoted ? JSON.stringify(r.val) : r.val}`,
        `"accn":${JSON.stringify(r.accn)}`,
        r.fy === undefined ? undefined : `"fy":${r.fy}`,
        r.fp === undefined ? undefined : `"fp":${JSON.stringify(r.fp)}`,
        `"form":${JSON.stringify(r.form)}`,
        `"filed":${JSON.stringify(r.filed)}`,
        r.frame === undefined ? undefined : `"frame":${JSON.stringify(r.frame)}`
      ]
        .filter((x) => x !== undefined)
        .join(",")}}`
    const concept = fc.record({
      label: name,
      units: fc.dictionary(
        fc.constantFrom("USD", "shares", "USD/shares", "pure", "EUR"),
        fc.array(row, { maxLength: 5 }),
        {
          maxKeys: 3
        }
      )
    })
    const doc = fc.record({
      cik: fc.integer({ min: 1, max: 9_999_999_999 }),
      entityName: name,
      facts: fc.dictionary(
        fc.constantFrom("us-gaap", "dei", "ifrs-full", "srt"),
        fc.dictionary(name, concept, { maxKeys: 4 }),
        {
          maxKeys: 3
        }
      ),
      pretty: fc.boolean()
    })
    fc.assert(
      fc.property(doc, fc.array(fc.nat({ max: 4000 }), { maxLength: 12 }), (d, cuts) => {
        const sp = d.pretty ? "\n  " : ""
        const facts = Object.entries(d.facts)
          .map(
            ([tax, concepts]) =>
              `${sp}${JSON.stringify(tax)}:${sp}{${Object.entries(concepts)
                .map(
                  ([c, v]) =>
                    `${sp}${JSON.stringify(c)}: {"label":${JSON.stringify(v.label)},"units":{${Object.entries(v.units)
                      .map(([u, rows]) => `${JSON.stringify(u)}:[${rows.map(rowText).join(`,${sp}`)}]`)
                      .join(",")}}}`
                )
                .join(",")}}`
          )
          .join(",")
        const text = `{"cik":${d.cik},${sp}"entityName":${JSON.stringify(d.entityName)},"facts":{${facts}}}`
        const whole = parsed(parseCompanyFacts(text))
        const got = stream(text, cuts)
        assert.strictEqual(got.problem, undefined)
        assert.deepStrictEqual(got.facts, whole.facts)
        assert.strictEqual(got.cik, whole.cik)
      }),
      { numRuns: 200 }
    )
  })

  it("refuses what the whole parser refuses, naming the same place inside a concept", () => {
    const good = fixtureText("companyfacts_small.json.raw")
    const cases: Array<[string, RegExp]> = [
      [good.slice(0, -20), /^\$: not valid JSON/],
      [good.replace('"val"', '"value"'), /\.val: missing$/],
      [good.replace(/"end":"(\d{4})-/, '"end":"$1/'), /\.end: expected a YYYY-MM-DD date/],
      [good.replace('"fy":', '"fy":1.5,"fyx":'), /\.fy: expected an integer, got 1\.5$/]
    ]
    for (const [text, message] of cases) {
      const whole = refused(parseCompanyFacts(text)).message
      assert.match(whole, message)
      for (const size of [1, 13, 1 << 30])
        assert.strictEqual(
          stream(text, every(text, size)).problem?.replace(/ \(.*\)$/, ""),
          whole.replace(/ \(.*\)$/, "")
        )
    }
    assert.strictEqual(stream('{"entityName":"x","facts":{}}', []).problem, "$.cik: missing")
    assert.strictEqual(stream('{"cik":1,"entityName":"x"}', []).problem, "$.facts: missing")
    assert.match(stream(`${good} x`, []).problem ?? "", /^\$: not valid JSON \("x" at byte \d+, where nothing after/)
    assert.match(
      stream('{"cik":1,"entityName":"x","facts":[]}', []).problem ?? "",
      /^\$\.facts: expected an object, got an array/
    )
    assert.match(
      stream('{"cik":1,"entityName":"x","facts":{"t":{"A":{"units":{}},"A":{"units":{}}}}}', []).problem ?? "",
      /^\$\.facts\.t\.A: named twice/
    )
    assert.match(
      stream('{"cik":1,"entityName":"x","facts":{"t":{"A":{"units":{"USD":[{]}}}}}', []).problem ?? "",
      /^\$\.facts\.t\.A: not valid JSON/
    )
    assert.match(stream("", []).problem ?? "", /^\$: not valid JSON/)
  })
})

describe.skipIf(!sharedSecPresent)(sharedSuite("CompanyFactsStream on Apple's real companyfacts"), () => {
  it("gives every fact parseCompanyFacts gives, in order, exactly, in 64 KB pieces and in pieces of 997 bytes", () => {
    const text = sharedSecText("companyfacts/CIK0000320193.json")
    const whole = sameAsWhole(text, [65536, 997])
    assert.isAbove(whole.facts.length, 20_000)
  })
})
