/**
 * A companyfacts document read as a stream of bytes, one concept at a time, so that memory holds one concept
 * (a few kilobytes to a megabyte), never the whole document (the largest real ones are tens of megabytes) nor its
 * parsed tree.
 *
 * The document is `{"cik": ..., "entityName": ..., "facts": {<taxonomy>: {<concept>: {"label": ..., "units":
 * {<unit>: [<row>, ...]}}}}}`. A byte scanner walks the three outer levels itself (the root, `facts`, each
 * taxonomy) and checks their grammar; every other value (a concept, `cik`, `entityName`, any other member) is
 * captured whole as its source bytes and read by `parseExactJson`, so numbers keep their exact source text
 * exactly as in `parseCompanyFacts`, including its reviver fallback for documents the fast path cannot take.
 * Each concept becomes its facts through the same `conceptFacts`, so the facts, their order and the messages of a
 * bad row are the whole-document parser's. Structural characters are ASCII and never occur inside a multi-byte
 * UTF-8 sequence, so scanning bytes is safe and values are decoded only once captured whole.
 *
 * Differences from `parseCompanyFacts`, on documents no SEC archive holds: a member named twice at the outer levels
 * (the root, `facts`, a taxonomy) is refused (JSON.parse would keep the last silently; a stream has already passed
 * the first on), and the first problem met in document order is the one reported.
 */
import * as Result from "effect/Result"
import { conceptFacts } from "./CompanyFacts.ts"
import type { Fact } from "./EquityModel.ts"
import { asCik, asObject, asString, FormatProblem, parseExactJson, problem, runParser } from "./ExactJson.ts"
import type { SecFormatError } from "./SecFormatError.ts"

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LBRACE = 0x7b
const RBRACE = 0x7d
const LBRACKET = 0x5b
const RBRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Where the scanner is (numbers, not an enum: Node strips types but does not compile enums). */
const Mode = { Root: 0, KeyOrEnd: 1, Key: 2, Colon: 3, Value: 4, CommaOrEnd: 5, Done: 6, Capture: 7 } as const
type Mode = (typeof Mode)[keyof typeof Mode]

const decode = (parts: ReadonlyArray<Uint8Array>): string => {
  if (parts.length === 1) {
    const p = parts[0] as Uint8Array
    return Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString("utf8")
  }
  return Buffer.concat(parts).toString("utf8")
}

const shown = (c: number) =>
  c >= 0x20 && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`

/** The entity of a companyfacts document, once its `cik` and `entityName` have been read. */
export interface CompanyFactsHeader {
  /** CIK without leading zeros. */
  readonly cik: string
  readonly entityName: string
}

/**
 * Reads a companyfacts document pushed in pieces; `onConcept` receives each concept's facts (in document order)
 * as soon as the concept is read. `push` and `end` return the document's first problem (and every call after it
 * returns the same), or undefined.
 */
export class CompanyFactsStream {
  private readonly onConcept: (facts: Array<Fact>) => void
  private mode: Mode = Mode.Root
  /** Open objects the scanner walks itself: 1 the root, 2 `facts`, 3 a taxonomy. */
  private level = 0
  private readonly keys: Array<string> = ["", "", "", ""]
  /** The member names met so far in each open level's object. */
  private readonly names: Array<Set<string>> = [new Set(), new Set(), new Set(), new Set()]
  private offset = 0
  private bomLeft = -1
  private capturing: "key" | "value" = "value"
  private capParts: Array<Uint8Array> = []
  private capStart = 0
  private capDepth = 0
  private capInString = false
  private capEscape = false
  private capScalar = false
  private cik: string | undefined
  private entityName: string | undefined
  private sawFacts = false
  private failed: SecFormatError | undefined
  /** Concepts and facts read so far. */
  concepts = 0
  facts = 0

  constructor(onConcept: (facts: Array<Fact>) => void) {
    this.onConcept = onConcept
  }

  /** The entity, once both its fields are read (in SEC documents, before the first fact). */
  get header(): CompanyFactsHeader | undefined {
    return this.cik === undefined || this.entityName === undefined
      ? undefined
      : { cik: this.cik, entityName: this.entityName }
  }

  /** Reads the next piece of the document. */
  push(chunk: Uint8Array): SecFormatError | undefined {
    if (this.failed !== undefined) return this.failed
    const r = runParser("companyfacts", () => this.scan(chunk))
    if (Result.isFailure(r)) this.failed = r.failure
    this.offset += chunk.length
    return this.failed
  }

  /** The document's end: its entity, or the problem (cut short, a required member missing). */
  end(): CompanyFactsHeader | SecFormatError {
    if (this.failed !== undefined) return this.failed
    const r = runParser("companyfacts", (): CompanyFactsHeader => {
      if (this.mode !== Mode.Done) return problem("$", "not valid JSON (the document ends before its last })")
      if (this.cik === undefined) return problem("$.cik", "missing")
      if (this.entityName === undefined) return problem("$.entityName", "missing")
      if (!this.sawFacts) return problem("$.facts", "missing")
      return { cik: this.cik, entityName: this.entityName }
    })
    if (Result.isFailure(r)) {
      this.failed = r.failure
      return r.failure
    }
    return r.success
  }

  private unexpected(c: number, at: number, expected: string): never {
    return problem("$", `not valid JSON (${shown(c)} at byte ${this.offset + at}, where ${expected} was expected)`)
  }

  private scan(chunk: Uint8Array): void {
    const n = chunk.length
    let i = 0
    if (this.mode === Mode.Capture) this.capStart = 0
    while (i < n) {
      if (this.mode === Mode.Capture) {
        i = this.scanCapture(chunk, i)
        continue
      }
      const c = chunk[i] as number
      if (this.bomLeft > 0) {
        if (c !== (this.bomLeft === 2 ? 0xbb : 0xbf)) this.unexpected(c, i, "a byte-order mark")
        this.bomLeft--
        i++
        continue
      }
      if (isSpace(c)) {
        i++
        continue
      }
      switch (this.mode) {
        case Mode.Root:
          if (c === 0xef && this.offset + i === 0) {
            this.bomLeft = 2
            i++
          } else if (c === LBRACE) {
            this.level = 1
            this.names[1]?.clear()
            this.mode = Mode.KeyOrEnd
            i++
          } else if (c === LBRACKET) problem("$", "expected an object, got an array")
          else this.unexpected(c, i, "the document's {")
          break
        case Mode.KeyOrEnd:
          if (c === RBRACE) {
            this.close()
            i++
          } else if (c === QUOTE) this.startCapture("key", chunk, i)
          else this.unexpected(c, i, "a member name or }")
          break
        case Mode.Key:
          if (c === QUOTE) this.startCapture("key", chunk, i)
          else this.unexpected(c, i, "a member name")
          break
        case Mode.Colon:
          if (c !== COLON) this.unexpected(c, i, ":")
          this.mode = Mode.Value
          i++
          break
        case Mode.Value:
          if (c === LBRACE && ((this.level === 1 && this.keys[1] === "facts") || this.level === 2)) {
            if (this.level === 1) this.sawFacts = true
            this.level++
            this.names[this.level]?.clear()
            this.mode = Mode.KeyOrEnd
            i++
          } else this.startCapture("value", chunk, i)
          break
        case Mode.CommaOrEnd:
          if (c === COMMA) {
            this.mode = Mode.Key
            i++
          } else if (c === RBRACE) {
            this.close()
            i++
          } else this.unexpected(c, i, ", or }")
          break
        case Mode.Done:
          this.unexpected(c, i, "nothing after the document")
      }
    }
    if (this.mode === Mode.Capture) this.capParts.push(chunk.subarray(this.capStart, n))
  }

  private close(): void {
    this.level--
    this.mode = this.level === 0 ? Mode.Done : Mode.CommaOrEnd
  }

  private startCapture(kind: "key" | "value", chunk: Uint8Array, i: number): void {
    const c = chunk[i] as number
    this.capturing = kind
    this.capParts = []
    this.capStart = i
    this.capDepth = 0
    this.capInString = false
    this.capEscape = false
    this.capScalar = c !== QUOTE && c !== LBRACE && c !== LBRACKET
    this.mode = Mode.Capture
  }

  /** Scans a captured value from `i`; returns where scanning goes on (its end, or the chunk's end). */
  private scanCapture(chunk: Uint8Array, start: number): number {
    const n = chunk.length
    let depth = this.capDepth
    let inString = this.capInString
    let escaped = this.capEscape
    if (this.capScalar) {
      for (let i = start; i < n; i++) {
        const c = chunk[i] as number
        if (c === COMMA || c === RBRACE || c === RBRACKET || isSpace(c)) return this.finish(chunk, i)
      }
      return n
    }
    // Most of a concept's bytes are inside strings (labels, descriptions, dates): those are skipped with the
    // native `indexOf` to the next quote, the next backslash found once and kept until passed.
    let backslash = -2
    for (let i = start; i < n; i++) {
      if (inString) {
        if (escaped) {
          escaped = false
          continue
        }
        if (backslash !== -1 && backslash < i) backslash = chunk.indexOf(BACKSLASH, i)
        const quote = chunk.indexOf(QUOTE, i)
        if (backslash !== -1 && (quote === -1 || backslash < quote)) {
          escaped = true
          i = backslash
          continue
        }
        if (quote === -1) break
        i = quote
        inString = false
        if (depth === 0) return this.finish(chunk, i + 1)
        continue
      }
      const c = chunk[i] as number
      if (c === QUOTE) inString = true
      else if (c === LBRACE || c === LBRACKET) depth++
      else if (c === RBRACE || c === RBRACKET) {
        depth--
        if (depth === 0) return this.finish(chunk, i + 1)
      }
    }
    this.capDepth = depth
    this.capInString = inString
    this.capEscape = escaped
    return n
  }

  private finish(chunk: Uint8Array, end: number): number {
    this.capParts.push(chunk.subarray(this.capStart, end))
    const text = decode(this.capParts)
    this.capParts = []
    if (this.capturing === "key") {
      let key: string
      try {
        key = JSON.parse(text) as string
      } catch (e) {
        return problem("$", `not valid JSON (member name ${text.slice(0, 60)}: ${e instanceof Error ? e.message : e})`)
      }
      const names = this.names[this.level] as Set<string>
      if (names.has(key)) {
        const at = this.level === 1 ? "$" : this.level === 2 ? "$.facts" : `$.facts.${this.keys[2]}`
        problem(`${at}.${key}`, "named twice in its object")
      }
      names.add(key)
      this.keys[this.level] = key
      this.mode = Mode.Colon
    } else {
      this.mode = Mode.CommaOrEnd
      this.value(text)
    }
    return end
  }

  /** A captured member value at the current level. */
  private value(text: string): void {
    const key = this.keys[this.level] as string
    if (this.level === 1) {
      const path = `$.${key}`
      const value = this.parse(text, path)
      if (key === "cik") this.cik = asCik(value, path)
      else if (key === "entityName") this.entityName = asString(value, path)
      else if (key === "facts") asObject(value, path)
    } else if (this.level === 2) {
      const path = `$.facts.${key}`
      asObject(this.parse(text, path), path)
    } else {
      const out: Array<Fact> = []
      conceptFacts(this.keys[2] as string, key, this.parse(text, `$.facts.${this.keys[2]}.${key}`), out)
      this.concepts++
      this.facts += out.length
      this.onConcept(out)
    }
  }

  /** A captured value parsed with exact numbers; a JSON error names the value's place. */
  private parse(text: string, path: string): unknown {
    try {
      return parseExactJson(text)
    } catch (e) {
      if (e instanceof FormatProblem && e.message.startsWith("$: "))
        throw new FormatProblem(`${path}${e.message.slice(1)}`)
      throw e
    }
  }
}
