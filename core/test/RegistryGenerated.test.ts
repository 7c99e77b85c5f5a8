/**
 * Parameter tests generated from the registry: every operation, every parameter, every cross rule, decoded
 * through `decodeParams`, the one decoder every transport uses (HTTP query pairs and MCP/library typed
 * arguments alike). Nothing here lists operations or parameters by hand: adding a parameter to `Operations`
 * adds its tests.
 *
 * Each case perturbs one thing in an otherwise valid request (the operation's required parameters and, for
 * `id` xor `ids`, one of the pair), so the expected code and `param` are unambiguous.
 */
import { it as effectIt } from "@effect/vitest"
import { memoryStores } from "@market-data/memory"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"
import * as SecureRandom from "effect/crypto/SecureRandom"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createKey } from "../src/Admin.ts"
import { type Plane, planeOf } from "../src/AssetId.ts"
import type { ErrorCode } from "../src/Errors.ts"
import {
  type CanonicalParams,
  type CrossRule,
  canonicalRequest,
  decodeParams,
  isApiError,
  type ParamSpec,
  type ParamValue
} from "../src/Params.ts"
import { Handlers, handle, Settings } from "../src/Pipeline.ts"
import { type OperationSpec, Operations } from "../src/Registry.ts"

type Raw = ReadonlyArray<readonly [string, unknown]>

const CRYPTO_IDS = Array.from({ length: 30 }, (_, i) => `crypto:asset-${i}`)
const EQUITY_IDS = Array.from({ length: 30 }, (_, i) => `eq:${1000 + i}:TK${i}`)

/** Fullwidth forms of printable ASCII (`4h` -> `４ｈ`): look alike, are not the same value. */
const fullwidth = (s: string) =>
  [...s].map((c) => (c >= "!" && c <= "~" ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join("")
const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

// ---------------------------------------------------------------------------------------------------------------
// Values a parameter accepts, from its declared type
// ---------------------------------------------------------------------------------------------------------------

/** A valid value for `p` (query-string text) whose asset, if any, is on `plane`. */
const validRaw = (p: ParamSpec, plane: Plane): string => {
  const t = p.type
  switch (t.kind) {
    case "enum":
      return t.values[0] as string
    case "int":
      return String(t.min)
    case "boolean":
      return "true"
    case "string":
      return "a".repeat(t.minLength)
    case "date":
      return "2024-02-29"
    case "assetId":
      return plane === "crypto" ? "crypto:bitcoin" : "eq:320193:AAPL"
    case "assetIdList":
      return (plane === "crypto" ? CRYPTO_IDS : EQUITY_IDS).slice(0, t.min).join(",")
    case "enumList":
      return t.values[0] as string
    case "cursor":
      return "c3RhcnQ"
  }
}

/** Boundary and representative values `p` must accept, each with the value it decodes to. */
const acceptedValues = (p: ParamSpec): ReadonlyArray<readonly [unknown, ParamValue]> => {
  const t = p.type
  switch (t.kind) {
    case "enum":
      return t.values.map((v) => [v, v] as const)
    case "int":
      return [
        [String(t.min), t.min],
        [String(t.max), t.max],
        [String(Math.floor((t.min + t.max) / 2)), Math.floor((t.min + t.max) / 2)],
        // Typed arguments (MCP, the library) arrive as numbers.
        [t.min, t.min],
        [t.max, t.max],
        // The decoder reads a sign and leading zeros as the same integer (and so the same normalized request).
        [`0${t.max}`, t.max],
        [`+${t.min}`, t.min],
        [`000${t.min}`, t.min]
      ]
    case "boolean":
      return [
        ["true", true],
        ["false", false],
        [true, true],
        [false, false]
      ]
    case "string":
      return [
        ["a".repeat(t.minLength), "a".repeat(t.minLength)],
        ["a".repeat(t.maxLength), "a".repeat(t.maxLength)],
        ["ビットコイン", "ビットコイン"],
        // Lengths count characters (code points), as the published JSON Schema's `maxLength` does.
        ["😀".repeat(t.maxLength), "😀".repeat(t.maxLength)],
        ["a b-c.d_e", "a b-c.d_e"]
      ]
    case "date":
      return [
        ["2024-02-29", "2024-02-29"],
        ["1999-12-31", "1999-12-31"],
        ["2000-01-01", "2000-01-01"]
      ]
    case "assetId":
      return [
        ["crypto:bitcoin", "crypto:bitcoin"],
        ["crypto:usd-coin", "crypto:usd-coin"],
        [`crypto:${"a".repeat(64)}`, `crypto:${"a".repeat(64)}`],
        ["crypto:1", "crypto:1"],
        ["eq:320193:AAPL", "eq:320193:AAPL"],
        ["eq:1:A", "eq:1:A"],
        ["eq:1067983:BRK.B", "eq:1067983:BRK.B"],
        ["eq:9999999999:ABCDEFGHIJ-ABCDE", "eq:9999999999:ABCDEFGHIJ-ABCDE"]
      ]
    case "assetIdList": {
      const min = CRYPTO_IDS.slice(0, t.min)
      const max = [...CRYPTO_IDS.slice(0, t.max - 1), EQUITY_IDS[0] as string]
      return [
        [min.join(","), min],
        [max.join(","), max],
        [min, min],
        [max, max]
      ]
    }
    case "enumList": {
      const all = t.values.slice(0, t.max)
      return [
        ...t.values.map((v) => [v, [v]] as const),
        [all.join(","), all],
        [[...all].reverse().join(","), [...all].reverse()],
        [all, all]
      ]
    }
    case "cursor":
      return [
        ["a", "a"],
        ["A-z_09", "A-z_09"],
        ["x".repeat(1024), "x".repeat(1024)]
      ]
  }
}

const circular: Record<string, unknown> = {}
circular.self = circular
/** What only an in-process caller can pass: the decoder must refuse it as a value, never throw. */
const EXOTIC: ReadonlyArray<unknown> = [10n, [10n], circular, Symbol("x"), () => 1, undefined, new Date(0)]

const SHARED_BAD = ["", " ", "null", "undefined", "*", "%", "%00", "\u0000", "ü", "🙂", "x".repeat(2000), ...EXOTIC]

/** Values `p` must refuse (with `invalid_parameter`, or `invalid_cursor` for a cursor). */
const refusedValues = (p: ParamSpec): ReadonlyArray<unknown> => {
  const t = p.type
  switch (t.kind) {
    case "enum": {
      const near = t.values.flatMap((v) => [
        v.toUpperCase(),
        capitalized(v),
        `${v}x`,
        `x${v}`,
        ` ${v}`,
        `${v} `,
        `${v}\u200b`,
        `${v}\u0000`,
        fullwidth(v),
        v.replace(/a/g, "\u0430"),
        [v],
        `${v},${v}`
      ])
      const joined = t.values.length > 1 ? [t.values.slice(0, 2).join(",")] : []
      const typed = [1, 0, true, false, null, {}]
      return [...near, ...joined, ...typed, ...SHARED_BAD].filter((v) => !t.values.includes(v as string))
    }
    case "int":
      return [
        String(t.min - 1),
        String(t.max + 1),
        t.min - 1,
        t.max + 1,
        String(t.max * 1000),
        "-1",
        `-${t.max}`,
        "1.5",
        `${t.min}.0`,
        `${t.min}.`,
        `.${t.min}`,
        "1e1",
        "0x10",
        "0b1",
        "1_0",
        ` ${t.min}`,
        `${t.min} `,
        "+",
        "-",
        "--1",
        "+-1",
        "١",
        "１",
        "Infinity",
        "NaN",
        "99999999999999999999",
        "true",
        1.5,
        t.min + 0.5,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        true,
        null,
        [t.min],
        ...SHARED_BAD
      ]
    case "boolean":
      return [
        "TRUE",
        "True",
        "FALSE",
        "1",
        "0",
        "yes",
        "no",
        "on",
        "tru",
        "true ",
        " false",
        1,
        0,
        null,
        [true],
        ...SHARED_BAD
      ]
    case "string":
      return [
        "",
        "a".repeat(t.maxLength + 1),
        "😀".repeat(t.maxLength + 1),
        "a\u0000b",
        "a\tb",
        "a\nb",
        "a\u007fb",
        "a\u0085b",
        "\u001b[31m",
        // Lone surrogates (possible in JSON arguments) are not text.
        "a\ud800b",
        "\udfff",
        `${"a".repeat(Math.max(0, t.minLength - 1))}\ud83d`,
        1,
        true,
        null,
        ["a"],
        ...EXOTIC
      ]
    case "date":
      return [
        "2025-02-29",
        "2023-02-29",
        "2025-13-01",
        "2025-00-10",
        "2025-04-31",
        "2025-01-00",
        "2025-1-01",
        "2025-01-1",
        "20250101",
        "2025/01/01",
        "2025-01-01T00:00:00Z",
        " 2025-01-01",
        "２０２５-01-01",
        "٢٠٢٥-01-01",
        "yesterday",
        20250101,
        null,
        ...SHARED_BAD
      ]
    case "assetId":
      return [
        "crypto:Bitcoin",
        "CRYPTO:bitcoin",
        "Crypto:bitcoin",
        "crypto:",
        "crypto",
        "bitcoin",
        "BTC",
        "crypto:bit coin",
        "crypto:bit_coin",
        "crypto:-btc",
        "crypto:btc-",
        "crypto:b--c",
        `crypto:${"a".repeat(65)}`,
        "crypto:bïtcoin",
        fullwidth("crypto:bitcoin"),
        "crypto:bitcoin,crypto:ethereum",
        "crypto:bitcoin ",
        "eq:0320193:AAPL",
        "eq:320193:aapl",
        "EQ:320193:AAPL",
        "eq:320193:",
        "eq::AAPL",
        "eq:320193",
        "eq:12345678901:AAPL",
        "eq:320193:AAPL.",
        "eq:320193:BRK.B.C",
        "eq:320193:ABCDEFGHIJK",
        "equity:320193:AAPL",
        1,
        null,
        ["crypto:bitcoin"],
        ...SHARED_BAD
      ]
    case "assetIdList": {
      const few = CRYPTO_IDS.slice(0, t.min - 1)
      const many = CRYPTO_IDS.slice(0, t.max + 1)
      const dup = [...CRYPTO_IDS.slice(0, t.min - 1), CRYPTO_IDS[0] as string]
      const ok = CRYPTO_IDS.slice(0, t.min)
      return [
        few.join(","),
        few,
        [],
        many.join(","),
        many,
        dup.join(","),
        dup,
        ["crypto:bitcoin", "crypto:bitcoin", "crypto:ethereum"].join(","),
        [...ok.slice(1), "crypto:Bitcoin"].join(","),
        [...ok.slice(1), "BTC"].join(","),
        [...ok, ""].join(","),
        ["", ...ok].join(","),
        ok.join(",,"),
        ok.join(", "),
        ok.join(";"),
        ok.join(" "),
        [...ok.slice(1), 1],
        1,
        null,
        ...SHARED_BAD
      ]
    }
    case "enumList": {
      const v0 = t.values[0] as string
      const others = t.values.filter((v) => v !== v0)
      return [
        [],
        // Too many is only reachable by repeating a value when max = the number of values.
        [...t.values, ...t.values].slice(0, t.max + 1).join(","),
        [...t.values, ...t.values].slice(0, t.max + 1),
        `${v0},${v0}`,
        [v0, v0],
        v0.toUpperCase(),
        `${v0},${capitalized(others[0] ?? v0)}`,
        `${v0},bogus`,
        `${v0},`,
        `,${v0}`,
        `${v0},,${others[0] ?? v0}`,
        `${v0}, ${others[0] ?? v0}`,
        `${v0};${others[0] ?? v0}`,
        fullwidth(v0),
        [v0, 1],
        1,
        null,
        ...SHARED_BAD
      ].filter((v) => !(typeof v === "string" && t.values.includes(v)))
    }
    case "cursor":
      // Shape only: whether a well-shaped cursor was issued by us is the operation's to judge.
      return [
        "a b",
        "a+b",
        "a/b",
        "a=",
        "abc==",
        "ü",
        "x".repeat(1025),
        "a.b",
        "a\u0000",
        1,
        null,
        ...SHARED_BAD
      ].filter((v) => !(typeof v === "string" && /^[A-Za-z0-9_-]{1,1024}$/.test(v)))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Building requests
// ---------------------------------------------------------------------------------------------------------------

const exactlyOneRules = (op: OperationSpec) =>
  op.rules.filter((r): r is Extract<CrossRule, { rule: "exactlyOne" }> => r.rule === "exactlyOne")

const spec = (op: OperationSpec, name: string): ParamSpec => {
  const p = op.params.find((q) => q.name === name)
  if (p === undefined) throw new Error(`${op.name} has no parameter ${name}`)
  return p
}

/**
 * The smallest valid request for `op`, built so that `focus` can be added to it: required parameters, and
 * one of each `id` xor `ids` pair (the focus itself when it is one of the pair).
 */
const base = (op: OperationSpec, focus?: string, plane: Plane = op.planes[0] ?? "crypto"): Array<[string, unknown]> => {
  const names = new Set<string>()
  for (const p of op.params) if (p.required) names.add(p.name)
  for (const r of exactlyOneRules(op)) names.add(r.params.includes(focus ?? "") ? (focus as string) : r.params[0])
  if (focus !== undefined) names.delete(focus)
  return op.params.filter((p) => names.has(p.name)).map((p) => [p.name, validRaw(p, plane)])
}

const decode = (op: OperationSpec, raw: Raw) => decodeParams(op, raw)

const expectError = (
  op: OperationSpec,
  raw: Raw,
  code: ErrorCode,
  param: string | undefined,
  what = JSON.stringify(raw)
) => {
  const out = decode(op, raw)
  expect(isApiError(out) ? out.code : `decoded ${JSON.stringify(out)}`, `${op.name} ${what}`).toBe(code)
  if (isApiError(out)) {
    expect(out.param, `${op.name} ${what}: param`).toBe(param)
    expect(out.message.length, `${op.name} ${what}: message`).toBeGreaterThan(0)
  }
}

const expectDecoded = (op: OperationSpec, raw: Raw, what = JSON.stringify(raw)): CanonicalParams => {
  const out = decode(op, raw)
  expect(isApiError(out) ? `${out.code}: ${out.message}` : "ok", `${op.name} ${what}`).toBe("ok")
  return out as CanonicalParams
}

const show = (u: unknown): string => {
  const typed = (): string => {
    try {
      return JSON.stringify(u) ?? String(u)
    } catch {
      return typeof u === "bigint" ? `${u}n` : Object.prototype.toString.call(u)
    }
  }
  const s = typeof u === "string" ? JSON.stringify(u) : `typed ${typeof u === "symbol" ? String(u) : typed()}`
  return s.length > 60 ? `${s.slice(0, 60)}...` : s
}

// ---------------------------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------------------------

describe("the registry the tests are generated from", () => {
  it("has all 23 operations, each with a valid minimal request", () => {
    expect(Operations).toHaveLength(23)
    for (const op of Operations) expectDecoded(op, base(op), "minimal request")
  })

  it("exercises every parameter kind the decoder knows", () => {
    const kinds = new Set(Operations.flatMap((op) => op.params.map((p) => p.type.kind)))
    expect([...kinds].sort()).toEqual(
      ["assetId", "assetIdList", "boolean", "cursor", "date", "enum", "enumList", "int", "string"].sort()
    )
  })
})

for (const op of Operations) {
  describe(`${op.name}`, () => {
    for (const p of op.params) {
      const expectedCode: ErrorCode = p.type.kind === "cursor" ? "invalid_cursor" : "invalid_parameter"

      it(`refuses every value of \`${p.name}\` outside its type (${p.type.kind}) with ${expectedCode}, param ${p.name}`, () => {
        const bad = refusedValues(p)
        expect(bad.length).toBeGreaterThan(5)
        for (const v of bad) {
          // An empty value is refused as empty ("omit it to use the default"), whatever the kind.
          const code = v === "" ? "invalid_parameter" : expectedCode
          expectError(op, [...base(op, p.name), [p.name, v]], code, p.name, show(v))
        }
      })

      it(`accepts the boundary values of \`${p.name}\` and decodes them exactly`, () => {
        for (const [raw, decoded] of acceptedValues(p)) {
          const out = expectDecoded(op, [...base(op, p.name), [p.name, raw]], show(raw))
          expect(out[p.name], `${op.name} ${p.name}=${show(raw)}`).toEqual(decoded)
        }
      })

      it(`refuses \`${p.name}\` given twice with invalid_parameter, param ${p.name}`, () => {
        const v = validRaw(p, op.planes[0] ?? "crypto")
        expectError(op, [...base(op, p.name), [p.name, v], [p.name, v]], "invalid_parameter", p.name, "same value")
        const other = acceptedValues(p).at(-1)?.[0]
        expectError(op, [...base(op, p.name), [p.name, v], [p.name, other]], "invalid_parameter", p.name, "other")
        // Repetition is refused before anything else is looked at.
        expectError(
          op,
          [
            [p.name, "%"],
            [p.name, "%"]
          ],
          "invalid_parameter",
          p.name,
          "repeated invalid"
        )
      })

      if (p.type.kind === "enum") {
        const values = p.type.values
        it(`refuses any text that is not exactly one of the values of \`${p.name}\` (property)`, () => {
          fc.assert(
            fc.property(
              fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary", maxLength: 8 }), fc.string()),
              (s) => {
                fc.pre(!values.includes(s))
                const out = decode(op, [...base(op, p.name), [p.name, s]])
                return isApiError(out) && out.code === "invalid_parameter" && out.param === p.name
              }
            ),
            { numRuns: 60, seed: 20261123 }
          )
        })
      }

      if (p.required) {
        it(`answers missing_parameter, param ${p.name}, when \`${p.name}\` is absent`, () => {
          expectError(op, base(op, p.name), "missing_parameter", p.name)
          // Also when every other parameter is present and valid.
          const rest = op.params
            .filter((q) => q.name !== p.name && !op.rules.some((r) => r.rule === "exactlyOne"))
            .filter((q) => !op.rules.some((r) => r.rule === "excludes" && r.param === q.name))
            .map((q): [string, string] => [q.name, validRaw(q, op.planes[0] ?? "crypto")])
          expectError(op, rest, "missing_parameter", p.name, "with every other parameter")
        })

        it(`says \`${p.name}\` is required when it is given empty`, () => {
          const out = decode(op, [...base(op, p.name), [p.name, ""]])
          expect(isApiError(out) && out.param).toBe(p.name)
          expect(isApiError(out) ? out.message : "").toMatch(new RegExp(`^\`${p.name}\` is required`))
          expect(isApiError(out) ? out.message : "").not.toMatch(/default/)
        })
      }
    }

    it("refuses unknown parameter names (case variants, unicode, empty, prototype keys) with invalid_parameter naming them", () => {
      const known = new Set(op.params.map((p) => p.name))
      const names = [
        "bogus",
        "",
        " ",
        "__proto__",
        "constructor",
        "toString",
        "hasOwnProperty",
        "ïd",
        "идентификатор",
        "🙂",
        "a".repeat(300),
        ...op.params.flatMap((p) => [
          p.name.toUpperCase(),
          capitalized(p.name),
          `${p.name} `,
          ` ${p.name}`,
          `${p.name}[]`
        ])
      ].filter((n) => !known.has(n))
      expect(names.length).toBeGreaterThan(10)
      for (const name of names) {
        expectError(op, [...base(op), [name, "x"]], "invalid_parameter", name, `name ${JSON.stringify(name)}`)
        // Unknown names are refused first, whatever else is wrong.
        expectError(op, [[name, ""]], "invalid_parameter", name, `alone ${JSON.stringify(name)}`)
      }
    })

    it("fills every default, and only defaults, into the canonical parameters", () => {
      for (const plane of op.planes.length === 0 ? (["crypto"] as const) : op.planes) {
        const raw = base(op, undefined, plane)
        const out = expectDecoded(op, raw, `minimal request on ${plane}`)
        const assetPlane = typeof out.id === "string" ? planeOf(out.id) : undefined
        const expected: Record<string, ParamValue> = Object.fromEntries(raw as Array<[string, ParamValue]>)
        for (const p of op.params) {
          if (p.default === undefined || p.name in expected) continue
          if ("value" in p.default) expected[p.name] = p.default.value
          else if (assetPlane !== undefined) expected[p.name] = p.default.byPlane[assetPlane]
        }
        expect(out, `${op.name} on ${plane}`).toEqual(expected)
        // Canonical order is declaration order.
        expect(Object.keys(out)).toEqual(op.params.map((p) => p.name).filter((n) => n in out))
      }
    })

    const byPlane = op.params.filter((p) => p.default !== undefined && "byPlane" in p.default)
    if (byPlane.length > 0 && op.params.some((p) => p.name === "ids")) {
      it("fills plane defaults for a single-plane batch and leaves them to the plane in a mixed batch", () => {
        const ids = spec(op, "ids")
        const max = ids.type.kind === "assetIdList" ? ids.type.max : 2
        for (const plane of op.planes) {
          const list = (plane === "crypto" ? CRYPTO_IDS : EQUITY_IDS).slice(0, max)
          const out = expectDecoded(op, [["ids", list.join(",")]])
          for (const p of byPlane) {
            if (p.default !== undefined && "byPlane" in p.default) expect(out[p.name]).toBe(p.default.byPlane[plane])
          }
        }
        const mixed = expectDecoded(op, [["ids", `${CRYPTO_IDS[0]},${EQUITY_IDS[0]}`]])
        for (const p of byPlane) expect(mixed[p.name], p.name).toBeUndefined()
        // An explicit value wins over the plane default, whatever the plane.
        for (const p of byPlane) {
          const v = p.type.kind === "enum" ? (p.type.values.at(-1) as string) : ""
          const out = expectDecoded(op, [
            ["ids", `${CRYPTO_IDS[0]},${EQUITY_IDS[0]}`],
            [p.name, v]
          ])
          expect(out[p.name]).toBe(v)
        }
      })
    }

    it("gives the same canonical request for any order of the same parameters", () => {
      const all = op.params
        .filter((p) => !op.rules.some((r) => r.rule === "exactlyOne" && r.params[1] === p.name))
        .filter((p) => !op.rules.some((r) => r.rule === "excludes" && r.param === p.name))
        .map((p): [string, string] => [p.name, validRaw(p, op.planes[0] ?? "crypto")])
      const forward = expectDecoded(op, all, "every parameter")
      const backward = expectDecoded(op, [...all].reverse(), "every parameter, reversed")
      expect(canonicalRequest(op.name, backward)).toBe(canonicalRequest(op.name, forward))
    })

    for (const r of op.rules) {
      switch (r.rule) {
        case "exactlyOne": {
          const [a, b] = r.params
          it(`\`${a}\` xor \`${b}\`: both is conflicting_parameters (param ${b}); neither is missing_parameter (param ${a})`, () => {
            const pa = spec(op, a)
            const pb = spec(op, b)
            expectError(
              op,
              [
                [a, validRaw(pa, "crypto")],
                [b, validRaw(pb, "crypto")]
              ],
              "conflicting_parameters",
              b
            )
            expectError(
              op,
              [
                [b, validRaw(pb, "crypto")],
                [a, validRaw(pa, "crypto")]
              ],
              "conflicting_parameters",
              b
            )
            // The conflict is reported before the values are looked at.
            expectError(
              op,
              [
                [a, "nope"],
                [b, "nope"]
              ],
              "conflicting_parameters",
              b
            )
            expectError(op, [], "missing_parameter", a)
            const others = op.params
              .filter((p) => p.name !== a && p.name !== b)
              .map((p): [string, string] => [p.name, validRaw(p, "crypto")])
            if (others.length > 0) expectError(op, others, "missing_parameter", a, "with the other parameters")
            expectDecoded(op, [[a, validRaw(pa, "crypto")]])
            expectDecoded(op, [[b, validRaw(pb, "crypto")]])
          })
          break
        }
        case "requiresValue": {
          it(`\`${r.param}\` requires \`${r.on}=${r.equals}\`: parameter_requires, param ${r.param}`, () => {
            const p = spec(op, r.param)
            const on = spec(op, r.on)
            if (on.type.kind !== "enum") throw new Error("requiresValue on a non-enum")
            const given: [string, string] = [r.param, validRaw(p, "crypto")]
            for (const v of on.type.values) {
              const raw = [...base(op, r.param), given, [r.on, v] as const]
              if (v === r.equals) expectDecoded(op, raw)
              else expectError(op, raw, "parameter_requires", r.param, `${r.on}=${v}`)
            }
            // Without `on`, its default decides.
            const dflt = on.default !== undefined && "value" in on.default ? on.default.value : undefined
            const omitted = [...base(op, r.param), given]
            if (dflt === r.equals) expectDecoded(op, omitted, `${r.on} defaulted`)
            else expectError(op, omitted, "parameter_requires", r.param, `${r.on} defaulted`)
            // Not giving `param` is always fine.
            for (const v of on.type.values) expectDecoded(op, [...base(op, r.param), [r.on, v]])
          })
          break
        }
        case "requiresIncludes": {
          it(`\`${r.param}\` requires \`${r.on}\` to include ${r.includes}: parameter_requires, param ${r.param}`, () => {
            const p = spec(op, r.param)
            const on = spec(op, r.on)
            if (on.type.kind !== "enumList") throw new Error("requiresIncludes on a non-list")
            const values = on.type.values
            const given: [string, string] = [r.param, validRaw(p, "crypto")]
            // Every non-empty subset of the list's values.
            for (let mask = 1; mask < 1 << values.length; mask++) {
              const subset = values.filter((_, i) => mask & (1 << i))
              if (subset.length > on.type.max) continue
              const raw = [...base(op, r.param), given, [r.on, subset.join(",")] as const]
              if (subset.includes(r.includes)) expectDecoded(op, raw)
              else expectError(op, raw, "parameter_requires", r.param, `${r.on}=${subset.join(",")}`)
            }
            const dflt = on.default !== undefined && "value" in on.default ? on.default.value : undefined
            const omitted = [...base(op, r.param), given]
            if (Array.isArray(dflt) && dflt.includes(r.includes)) expectDecoded(op, omitted, `${r.on} defaulted`)
            else expectError(op, omitted, "parameter_requires", r.param, `${r.on} defaulted`)
          })
          break
        }
        case "excludes": {
          it(`\`${r.param}\` excludes ${r.others.join(", ")}: conflicting_parameters naming the other`, () => {
            const p = spec(op, r.param)
            const given: [string, string] = [r.param, validRaw(p, "crypto")]
            for (const o of r.others) {
              const other: [string, string] = [o, validRaw(spec(op, o), "crypto")]
              expectError(op, [...base(op), given, other], "conflicting_parameters", o)
              expectError(op, [...base(op), other, given], "conflicting_parameters", o, "other first")
              // Each alone is fine.
              expectDecoded(op, [...base(op), other])
            }
            const all = r.others.map((o): [string, string] => [o, validRaw(spec(op, o), "crypto")])
            expectError(op, [...base(op), given, ...[...all].reverse()], "conflicting_parameters", r.others[0])
            expectDecoded(op, [...base(op), given])
          })
          break
        }
      }
    }

    if (op.params.length === 0) {
      it("takes no parameters", () => {
        expectDecoded(op, [])
        expect(decode(op, [])).toEqual({})
      })
    }
  })
}

describe("the pipeline every transport runs", () => {
  effectIt.effect("answers exactly what decodeParams answers, for a refused value of every parameter", () =>
    Effect.gen(function* () {
      const ctx = yield* Layer.build(
        Layer.mergeAll(
          memoryStores(),
          Layer.succeed(Settings)({ rateLimitPerMinute: 1_000_000 }),
          Digest.layerWebCrypto,
          SecureRandom.layerWebCrypto,
          Layer.succeed(Handlers)(new Map())
        )
      )
      const key = yield* createKey({ credits: 0 }).pipe(Effect.provide(ctx))
      let compared = 0
      for (const op of Operations) {
        const cases: Array<Raw> = [[...base(op), ["bogus", "x"]]]
        for (const p of op.params) cases.push([...base(op, p.name), [p.name, refusedValues(p)[0]]])
        if (op.params.some((p) => p.required)) cases.push([])
        for (const raw of cases) {
          const direct = decode(op, raw)
          if (!isApiError(direct)) throw new Error(`${op.name} ${JSON.stringify(raw)} decoded`)
          const answer = yield* handle({
            operation: op.name,
            params: raw,
            authorization: [`Bearer ${key.key}`],
            client: "generated"
          }).pipe(Effect.provide(ctx))
          const outcome = answer.outcome
          expect(outcome._tag, `${op.name} ${show(raw)}`).toBe("Failure")
          if (outcome._tag === "Failure") {
            expect(outcome.error.toBody(), `${op.name} ${show(raw)}`).toEqual(direct.toBody())
            expect(outcome.creditsCharged).toBe(0)
          }
          compared++
        }
      }
      expect(compared).toBeGreaterThan(Operations.length * 2)
    }).pipe(Effect.scoped)
  )
})
