import { describe, expect, it } from "vitest"
import { type DocsContext, docsExamples, renderDocs } from "../src/Docs.ts"
import { ErrorCodes } from "../src/Errors.ts"
import { decodeParams, isApiError } from "../src/Params.ts"
import { DocsSections, Operations, operation } from "../src/Registry.ts"

const ctx = (implemented: ReadonlyArray<string>): DocsContext => ({
  implemented: new Set(implemented),
  rateLimitPerMinute: 60,
  basePath: "/api/v1"
})
const some = ctx(["docs", "schema", "usage", "price"])

const pairs = (query: string) =>
  query
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const i = p.indexOf("=")
      return [decodeURIComponent(p.slice(0, i)), decodeURIComponent(p.slice(i + 1))] as const
    })

describe("docs", () => {
  it("renders all eleven sections as markdown with a heading", () => {
    expect(DocsSections).toHaveLength(11)
    for (const s of DocsSections) {
      const md = renderDocs(s, some)
      expect(md.startsWith("# "), s).toBe(true)
      expect(md.length, s).toBeGreaterThan(300)
    }
  })

  it("does not call the data live in the index; it names each source label", () => {
    const index = renderDocs("index", some)
    expect(index).not.toMatch(/\blive (crypto|market|data)/i)
    for (const source of ["`simulated`", "`live`", "`sec`", "`X-Data-Source`"]) expect(index).toContain(source)
    expect(renderDocs("domains", some)).toContain("`sec`")
  })

  it("every example request is valid for the registry", () => {
    for (const e of docsExamples) {
      const op = operation(e.operation)
      expect(op, e.operation).toBeDefined()
      const decoded = decodeParams(op!, pairs(e.query))
      expect(isApiError(decoded) ? decoded.message : "ok", `${e.operation}?${e.query}`).toBe("ok")
    }
  })

  it("shows no example request that is not declared (and so checked)", () => {
    const declared = new Set(
      docsExamples.map((e) => `GET /api/v1/${e.operation}${e.query === "" ? "" : `?${e.query}`}`)
    )
    for (const s of DocsSections) {
      for (const m of renderDocs(s, some).matchAll(/GET (\/api\/v1\/[a-z_]+(?:\?[^\s`|]*)?)/g)) {
        const shown = `GET ${m[1]}`
        if (shown.includes("<") || shown === "GET /api/v1/openapi") continue
        expect(declared.has(shown), `${s}: ${shown}`).toBe(true)
      }
    }
  })

  it("has an example for every operation", () => {
    const covered = new Set(docsExamples.filter((e) => e.section === "examples").map((e) => e.operation))
    expect([...covered].sort()).toEqual(Operations.map((o) => o.name).sort())
  })

  it("prices every operation and documents every parameter of every operation", () => {
    const pricing = renderDocs("pricing", some)
    const domains = renderDocs("domains", some)
    for (const op of Operations) {
      expect(pricing).toContain(`\`${op.name}\``)
      expect(domains).toContain(`### \`${op.name}\``)
      for (const p of op.params) expect(domains).toContain(`\`${p.name}\``)
    }
  })

  it("lists every error code with its status", () => {
    const errors = renderDocs("errors", some)
    for (const c of ErrorCodes) expect(errors).toContain(`\`${c}\``)
    expect(errors).toContain("| 402 | `insufficient_credits`")
  })

  it("lists exactly the operations that are not implemented as temporary in the changelog", () => {
    const partial = renderDocs("changelog", some)
    const temporary = /Temporary: .*?: (.*)\./.exec(partial)?.[1] ?? ""
    const listed = [...temporary.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])
    expect(listed.sort()).toEqual(
      Operations.map((o) => o.name)
        .filter((n) => !["docs", "schema", "usage", "price"].includes(n))
        .sort()
    )
    const full = renderDocs("changelog", ctx(Operations.map((o) => o.name)))
    expect(full).toContain("Nothing is temporary.")
    expect(full).not.toContain("501")
  })

  it("states the rate-limit policy it is given", () => {
    expect(renderDocs("access", { ...some, rateLimitPerMinute: 120 })).toContain("120 rate units per rolling 60 s")
  })
})
