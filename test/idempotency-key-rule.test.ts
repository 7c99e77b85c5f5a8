/**
 * One rule for the `Idempotency-Key`, worded once (`IDEMPOTENCY_KEY_RULE`): the served docs (`access`), every
 * rejection's message, the error table and the OpenAPI schema say it in the same words, and the schema's pattern
 * accepts exactly the keys the validator accepts (inner spaces yes, a space at either end no, printable ASCII only).
 */
import { openApiDocument } from "@market-data/http"
import { describe, expect, it } from "vitest"
import { type DocsContext, renderDocs } from "../core/src/Docs.ts"
import { ErrorCatalog, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from "../core/src/Errors.ts"
import { validateIdempotencyKey } from "../core/src/Idempotency.ts"
import { isApiError } from "../core/src/Params.ts"

const ctx: DocsContext = { implemented: new Set(["price"]), rateLimitPerMinute: 60, basePath: "/api/v1" }

const KEYS: ReadonlyArray<readonly [string, boolean]> = [
  ["a", true],
  ["order-42", true],
  ["retry of order 42", true],
  ["~!@#$%^&*()_+{}|:<>?", true],
  ["x".repeat(128), true],
  ["x".repeat(129), false],
  ["", false],
  [" leading", false],
  ["trailing ", false],
  [" ", false],
  ["tab\tinside", false],
  ["line\nbreak", false],
  ["caf\u00e9", false],
  ["del\u007f", false]
]

describe("the Idempotency-Key rule", () => {
  it("the validator and the schema's pattern accept the same keys", () => {
    const pattern = new RegExp(IDEMPOTENCY_KEY_PATTERN)
    for (const [key, ok] of KEYS) {
      const result = validateIdempotencyKey([key])
      expect(typeof result === "string", JSON.stringify(key)).toBe(ok)
      expect(pattern.test(key) && key.length <= 128, JSON.stringify(key)).toBe(ok)
    }
  })

  it("every rejection names the rule in its words", () => {
    for (const values of [[""], ["x".repeat(129)], [" x"], ["caf\u00e9"], ["a", "b"]]) {
      const result = validateIdempotencyKey(values)
      expect(isApiError(result)).toBe(true)
      if (isApiError(result)) expect(result.message).toContain(`a key is ${IDEMPOTENCY_KEY_RULE}`)
    }
  })

  it("the docs, the error table and the OpenAPI schema say the same rule", () => {
    expect(renderDocs("access", ctx)).toContain(IDEMPOTENCY_KEY_RULE)
    expect(ErrorCatalog.invalid_idempotency_key.when).toContain(IDEMPOTENCY_KEY_RULE)
    const doc = openApiDocument(new Set(["price"])) as {
      paths: Record<string, { get: { parameters: Array<{ name: string; description?: string; schema: object }> } }>
    }
    const header = doc.paths["/api/v1/price"]?.get.parameters.find((p) => p.name === "Idempotency-Key")
    expect(header?.description).toContain(IDEMPOTENCY_KEY_RULE)
    expect(header?.schema).toMatchObject({ minLength: 1, maxLength: 128, pattern: IDEMPOTENCY_KEY_PATTERN })
  })
})
