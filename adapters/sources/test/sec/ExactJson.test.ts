/**
 * `parseExactJson` gives the tree of `JSON.parse` with a source-keeping reviver (every number a `JsonNumber`
 * holding its text) whether it takes its fast way (member numbers rewritten as marked strings) or falls back to the
 * reviver: documents built to trip the rewrite (numbers inside strings, in arrays, at the top, `\u0001` written by
 * the document) parse to exactly the reviver's tree, and bad JSON keeps the reviver's message.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { JsonNumber, parseExactJson, parseMarked } from "../../src/sec/ExactJson.ts"

const reference = (text: string): unknown =>
  JSON.parse(text, ((_k: string, v: unknown, c?: { source?: string }) =>
    typeof v === "number" ? new JsonNumber(c?.source as string) : v) as never)

const CASES = [
  '{"val":1.10,"fy":2024,"big":1234567890123456789.123456,"neg":-0,"exp":1.5E+3,"e2":2e-7}',
  '{"label":"Ratio 2:1, then 3:4}","val":5}',
  '{"label":"a: 1,", "b" : 12 , "c":{"d":-3.25}}',
  '{"arr":[1,2.50,{"x":3}],"y":4}',
  "[1, 2, 3]",
  "42",
  '{"s":"\\u0001123","n":7}',
  '{"s":"back\\\\u0001slash","n":7}',
  '{"nested":{"a":{"b":{"c":[{"v":0.000}]}}},"t":true,"f":false,"z":null}',
  '{"__proto__":{"val":1},"x":2}',
  '{ "spaced"  :   17   }',
  '{"unicode":"caf\\u00e9: 9,","k":1}'
]

describe("parseExactJson", () => {
  for (const text of CASES) {
    it(`gives the reviver's tree for ${text.slice(0, 50)}`, () => {
      expect(parseExactJson(text)).toEqual(reference(text))
    })
  }

  it("takes the fast way where it is sure and leaves the others to the reviver", () => {
    expect(parseMarked(CASES[0] as string)?.tree).toEqual(reference(CASES[0] as string))
    expect(parseMarked(CASES[8] as string)).toBeDefined()
    expect(parseMarked(CASES[10] as string)).toBeDefined()
    // A number inside a string, in an array, at the top; a document writing \u0001 itself.
    for (const i of [1, 2, 3, 4, 5, 6, 7]) expect(parseMarked(CASES[i] as string)).toBeUndefined()
  })

  it("keeps the reviver's message for bad JSON", () => {
    for (const bad of ['{"val":1,', '{"val":01}', '{"val":1.}', "", '{"a":"x:1,"']) {
      let message = ""
      try {
        reference(bad)
      } catch (e) {
        message = (e as Error).message
      }
      expect(() => parseExactJson(bad)).toThrow(message)
    }
  })

  const apple = "../shared/data/sec/companyfacts/CIK0000320193.json"
  it("gives the reviver's tree for Apple's companyfacts (real data)", (ctx) => {
    let text: string
    try {
      text = readFileSync(apple, "utf8")
    } catch {
      ctx.skip(`real SEC data absent (${apple})`)
      return
    }
    expect(parseExactJson(text)).toEqual(reference(text))
  })
})
