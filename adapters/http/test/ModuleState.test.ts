/**
 * Nothing mutable at module scope in the HTTP adapter: what a server keeps (the write batch, the root and OpenAPI
 * documents, the docs page's assets) is created by the server's handler (`makeRequestHandler`), so two servers in
 * one process, or a test beside a server, never share it. The rule, checked on every module-scope declaration of
 * `adapters/http/src` (a declaration at column 0, as the formatter writes it):
 * - no `let` or `var`;
 * - no `new` in a constant's value (a collection, a cache, a class instance: each holds state); a function's
 *   body is not module scope (it creates its state per call), an immediately called one's is;
 * - no Effect constructor of state (`makeUnsafe`, `*Unsafe(`: a semaphore, a reference, a queue);
 * - an object or array constant has a read-only type (`Readonly<...>`, `ReadonlyArray<...>`, `as const`, or an
 *   interface of read-only fields), so TypeScript refuses a write to it.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = resolve(import.meta.dirname, "..", "src")

/** Module-scope declarations of a source text that break the rule, as `line: text` (empty when none). */
export const moduleStateViolations = (source: string): Array<string> => {
  const lines = source.split("\n")
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (/^(export )?(let|var) /.test(line)) {
      out.push(`${i + 1}: ${line}`)
      continue
    }
    const declared = /^(?:export )?const \w+(?::\s*([^=]+?))?\s*=\s*(.*)$/.exec(line)
    if (declared === null) continue
    // The constant's whole value: this line's rest and the indented lines below it.
    let value = declared[2] as string
    for (let j = i + 1; j < lines.length && /^(\s|\)|\]|\}|$)/.test(lines[j] as string); j++) {
      if ((lines[j] as string).length === 0) break
      value += `\n${lines[j]}`
    }
    value = value.trim()
    // A function creates its state per call: only what the module evaluates once counts.
    const isFunction =
      /^(async\s|function\b|<|\(|\w+\s*=>)/.test(value) && /=>|function\b/.test(value) && !/\)\(\)\s*$/.test(value)
    if (isFunction) continue
    const type = declared[1]?.trim()
    const literal = /^[[{]/.test(value) && /[\]}]\s*$/.test(value)
    const mutableType = type !== undefined && /^(Record|Array|Map|Set|WeakMap|WeakSet)\b|\[\]$/.test(type)
    if (
      /(^|[^\w.])new [A-Z]/.test(value) ||
      /\b\w*Unsafe\(/.test(value) ||
      mutableType ||
      (literal && type === undefined)
    )
      out.push(`${i + 1}: ${line}`)
  }
  return out
}

describe("module-scope state in adapters/http/src", () => {
  it("holds nothing mutable", () => {
    const files = readdirSync(SRC).filter((f) => f.endsWith(".ts"))
    expect(files.length).toBeGreaterThan(5)
    const found = files.flatMap((f) =>
      moduleStateViolations(readFileSync(join(SRC, f), "utf8")).map((v) => `${f}:${v}`)
    )
    expect(found).toEqual([])
  })

  it("the rule catches what it names, and lets constants be", () => {
    const caught = [
      "let pending: Array<string> = []",
      "export var count = 0",
      "const cache = new Map<string, string>()",
      "const pages = new WeakMap<object, Promise<string>>()",
      "const turns = Semaphore.makeUnsafe(4)",
      "const ref = Ref.makeUnsafe(0)",
      "const CORS: Record<string, string> = {",
      'const NAMES: Array<string> = ["a"]',
      'const NAMES: string[] = ["a"]',
      'const EXPOSED = ["a", "b"]',
      "const headers = {\n  a: 1\n}",
      "const markdown = (() => {\n  const md = new MarkdownIt()\n  return md\n})()"
    ]
    for (const source of caught) expect(moduleStateViolations(source), source).toHaveLength(1)
    const allowed = [
      "const MAX = 8192",
      'const PATH = "/"',
      'const TURN = Symbol("x")',
      "const CORS: Readonly<Record<string, string>> = {",
      'const EXPOSED = ["a", "b"] as const',
      'const NAMES: ReadonlyArray<string> = ["a"]',
      'const CSP = [\n  "a",\n  "b"\n].join("; ")',
      "export const API_ONLY: HttpRoutes = { mounts: [], headers: {} }",
      "const make = () => new Map<string, string>()",
      "  let local = 0",
      "  const inner = new Map()"
    ]
    for (const source of allowed) expect(moduleStateViolations(source), source).toEqual([])
  })
})
