/**
 * Test inputs for the equity logic: the raw Apple companyfacts file from `../shared/data/sec` (when present)
 * turned into `Fact`s, and small hand-made facts.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Fact } from "../../src/equity/Model.ts"

export const SEC_DATA = join(import.meta.dirname, "..", "..", "..", "..", "shared", "data", "sec")
export const APPLE_COMPANYFACTS = join(SEC_DATA, "companyfacts", "CIK0000320193.json")
export const hasAppleFacts = existsSync(APPLE_COMPANYFACTS)

interface RawFact {
  readonly start?: string
  readonly end: string
  readonly val: number
  readonly accn: string
  readonly fy?: number | null
  readonly fp?: string | null
  readonly form: string
  readonly filed: string
  readonly frame?: string
}

/**
 * Apple's facts. The numbers are taken as the JSON text spells them: every value in this file is an integer
 * or a short decimal, whose shortest round-trip text is exactly the filed text.
 */
export const appleFacts = (): ReadonlyArray<Fact> => {
  const json = JSON.parse(readFileSync(APPLE_COMPANYFACTS, "utf8")) as {
    facts: Record<string, Record<string, { units: Record<string, ReadonlyArray<RawFact>> }>>
  }
  const out: Array<Fact> = []
  for (const [taxonomy, concepts] of Object.entries(json.facts)) {
    for (const [concept, { units }] of Object.entries(concepts)) {
      for (const [unit, facts] of Object.entries(units)) {
        for (const f of facts) {
          out.push({
            taxonomy,
            concept,
            unit,
            value: String(f.val),
            start: f.start ?? null,
            end: f.end,
            fy: f.fy ?? null,
            fp: f.fp ?? null,
            form: f.form,
            accession: f.accn,
            filed: f.filed,
            frame: f.frame ?? null
          })
        }
      }
    }
  }
  return out
}

/** A hand-made fact (us-gaap, USD unless given). */
export const fact = (
  concept: string,
  value: string,
  start: string | null,
  end: string,
  filing: {
    readonly accession: string
    readonly filed: string
    readonly form?: string
    readonly fy?: number
    readonly fp?: string
  },
  unit = "USD"
): Fact => ({
  taxonomy: "us-gaap",
  concept,
  unit,
  value,
  start,
  end,
  fy: filing.fy ?? null,
  fp: filing.fp ?? null,
  form: filing.form ?? "10-Q",
  accession: filing.accession,
  filed: filing.filed,
  frame: null
})
