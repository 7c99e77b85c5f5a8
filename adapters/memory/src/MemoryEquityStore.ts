/**
 * In-memory twin of the equity store: maps keyed by the same natural keys as the PostgreSQL tables, so that
 * writes are idempotent in the same way.
 */
import {
  type Company,
  type CompanyCoverage,
  type CompanyHoldings,
  type DailyBar,
  EquityStore,
  type Fact,
  type FilerReport,
  type Filing,
  type HoldingsReport,
  type Issuer,
  type IssuerNames,
  issuerCompany,
  issuerNameKey,
  type OwnershipReport,
  type TickerEntry
} from "@market-data/core"
import { Effect, Layer } from "effect"

const factKey = (f: Fact) => [f.taxonomy, f.concept, f.unit, f.start ?? "", f.end, f.accession].join("|")

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const makeMemoryEquityStore = (): EquityStore["Service"] => {
  const companies = new Map<string, Company>()
  const tickers = new Map<string, TickerEntry>()
  const facts = new Map<string, Map<string, Fact>>()
  const filings = new Map<string, Map<string, Filing>>()
  const ownership = new Map<string, OwnershipReport>()
  const holdings = new Map<string, HoldingsReport>()
  const securities = new Map<string, string>()
  /** Daily bars by CIK, then ticker, then open time (the key of `equity_bars`). */
  const bars = new Map<string, Map<string, Map<number, DailyBar>>>()

  const inner = <V>(outer: Map<string, Map<any, V>>, key: string): Map<any, V> => {
    let m = outer.get(key)
    if (m === undefined) {
      m = new Map()
      outer.set(key, m)
    }
    return m
  }

  const cusipsOf = (cik: string) => [...securities].filter(([, c]) => c === cik).map(([cusip]) => cusip)

  /** What names each CIK without a company row: its ticker rows, its Form 4 reports (`issuerCompany`). */
  const namesByCik = (only?: string): Map<string, IssuerNames> => {
    const out = new Map<string, { listed: Array<TickerEntry>; form4: IssuerNames["form4"]; newest: string }>()
    const at = (cik: string) => {
      let n = out.get(cik)
      if (n === undefined) {
        n = { listed: [], form4: undefined, newest: "" }
        out.set(cik, n)
      }
      return n
    }
    for (const t of tickers.values()) if (only === undefined || t.cik === only) at(t.cik).listed.push(t)
    const reports = [...ownership.values()]
      .filter((r) => only === undefined || r.issuerCik === only)
      .sort((a, b) => byString(a.filedAt, b.filedAt) || byString(a.accession, b.accession))
    for (const r of reports) {
      const n = at(r.issuerCik)
      n.form4 = { name: r.issuerName, tickers: [...(n.form4?.tickers ?? []), r.issuerTicker] }
    }
    return new Map([...out].map(([cik, n]) => [cik, { listed: n.listed, form4: n.form4 }]))
  }

  const NO_NAMES: IssuerNames = { listed: [], form4: undefined }

  const issuerOf = (cik: string, names: Map<string, IssuerNames>) =>
    issuerCompany(cik, companies.get(cik), names.get(cik) ?? NO_NAMES)

  const holdingsOf = (cik: string, known?: Company): CompanyHoldings => {
    const cusips = new Set(cusipsOf(cik))
    const nameKey = issuerNameKey((known ?? issuerOf(cik, namesByCik(cik)))?.name ?? "")
    const matches = (cusip: string, issuer: string) =>
      cusips.size > 0 ? cusips.has(cusip.toUpperCase()) : nameKey.length > 0 && issuerNameKey(issuer) === nameKey
    const rows: Array<CompanyHoldings["holdings"][number]> = []
    const filers = new Set<string>()
    for (const r of holdings.values()) {
      for (const h of r.holdings) {
        if (!matches(h.cusip, h.nameOfIssuer)) continue
        rows.push({ accession: r.accession, holding: h })
        filers.add(r.filerCik)
      }
    }
    const reports: Array<FilerReport> = [...holdings.values()]
      .filter((r) => filers.has(r.filerCik))
      .map((r) => ({
        filerCik: r.filerCik,
        filerName: r.filerName,
        accession: r.accession,
        form: r.form,
        filedAt: r.filedAt,
        reportPeriod: r.reportPeriod
      }))
      .sort((a, b) => byString(a.accession, b.accession))
    return { reports, holdings: rows }
  }

  /** Who holds what, once for a whole listing: the CUSIPs by CIK, the CUSIPs and issuer names 13F rows give. */
  const holdingIndex = () => {
    const cusipsByCik = new Map<string, Array<string>>()
    for (const [cusip, cik] of securities) cusipsByCik.set(cik, [...(cusipsByCik.get(cik) ?? []), cusip])
    const heldCusips = new Set<string>()
    const heldNames = new Set<string>()
    for (const r of holdings.values()) {
      for (const h of r.holdings) {
        heldCusips.add(h.cusip.toUpperCase())
        heldNames.add(issuerNameKey(h.nameOfIssuer))
      }
    }
    return (cik: string, known: Company): boolean => {
      const cusips = cusipsByCik.get(cik) ?? []
      if (cusips.length > 0) return cusips.some((c) => heldCusips.has(c))
      const key = issuerNameKey(known.name)
      return key.length > 0 && heldNames.has(key)
    }
  }

  const coverageOf = (
    cik: string,
    known: Company,
    held: (cik: string, known: Company) => boolean = (c, k) => holdingsOf(c, k).holdings.length > 0
  ): CompanyCoverage => {
    const f = [...(facts.get(cik)?.values() ?? [])]
    const fl = [...(filings.get(cik)?.values() ?? [])]
    const tickerBars = [...(bars.get(cik) ?? [])]
      .filter(([, m]) => m.size > 0)
      .sort(([a], [b]) => byString(a, b))
      .map(([ticker, m]) => ({ ticker, bars: m.size, lastBarMs: Math.max(...m.keys()) }))
    const barCount = tickerBars.reduce((n, t) => n + t.bars, 0)
    const dates = [...f.map((x) => x.filed), ...fl.map((x) => x.filedAt)]
    return {
      cik,
      facts: f.length,
      filings: fl.length,
      lastFiledAt: dates.length === 0 ? null : dates.reduce((m, d) => (d > m ? d : m)),
      bars: barCount,
      lastBarMs: tickerBars.length === 0 ? null : Math.max(...tickerBars.map((t) => t.lastBarMs)),
      tickerBars,
      hasHolders: held(cik, known)
    }
  }

  return {
    putCompany: (company) => Effect.sync(() => void companies.set(company.cik, company)),
    putTickers: (entries) =>
      Effect.sync(() => {
        for (const e of entries) tickers.set(`${e.cik}|${e.ticker}`, e)
        return entries.length
      }),
    putFacts: (cik, list) =>
      Effect.sync(() => {
        const m = inner(facts, cik)
        let written = 0
        for (const f of list) {
          const k = factKey(f)
          if (m.has(k)) continue
          m.set(k, f)
          written++
        }
        return written
      }),
    putFilings: (cik, list) =>
      Effect.sync(() => {
        const m = inner(filings, cik)
        let written = 0
        for (const f of list) {
          if (m.has(f.accession)) continue
          m.set(f.accession, f)
          written++
        }
        return written
      }),
    putOwnershipReports: (reports) =>
      Effect.sync(() => {
        let written = 0
        for (const r of reports) {
          if (ownership.has(r.accession)) continue
          ownership.set(r.accession, r)
          written++
        }
        return written
      }),
    putHoldingsReports: (reports) =>
      Effect.sync(() => {
        let written = 0
        for (const r of reports) {
          if (holdings.has(r.accession)) continue
          holdings.set(r.accession, r)
          written++
        }
        return written
      }),
    putSecurities: (cik, cusips) =>
      Effect.sync(() => {
        for (const c of cusips) securities.set(c.toUpperCase(), cik)
      }),
    putBars: (cik, ticker, list) =>
      Effect.sync(() => {
        const m = inner(inner(bars, cik), ticker)
        for (const b of list) m.set(b.tMs, b)
        return list.length
      }),

    companies: Effect.sync(() => [...companies.values()].sort((a, b) => byString(a.cik, b.cik))),
    company: (cik) => Effect.sync(() => companies.get(cik)),
    tickers: Effect.sync(() =>
      [...tickers.values()].sort((a, b) => byString(a.cik, b.cik) || byString(a.ticker, b.ticker))
    ),
    facts: (cik, concepts) =>
      Effect.sync(() => {
        const all = [...(facts.get(cik)?.values() ?? [])]
        if (concepts === undefined) return all
        const wanted = new Set(concepts)
        return all.filter((f) => wanted.has(f.concept))
      }),
    filings: (cik) =>
      Effect.sync(() =>
        [...(filings.get(cik)?.values() ?? [])].sort(
          (a, b) => byString(b.acceptedAt, a.acceptedAt) || byString(b.accession, a.accession)
        )
      ),
    ownershipReports: (issuerCik) =>
      Effect.sync(() =>
        [...ownership.values()]
          .filter((r) => r.issuerCik === issuerCik)
          .sort((a, b) => byString(a.filedAt, b.filedAt) || byString(a.accession, b.accession))
      ),
    holdings: (cik) => Effect.sync(() => holdingsOf(cik)),
    bars: (cik, ticker, range) =>
      Effect.sync(() => {
        const all = [...(bars.get(cik)?.get(ticker)?.values() ?? [])]
          .filter(
            (b) =>
              (range.fromMs === undefined || b.tMs >= range.fromMs) && (range.toMs === undefined || b.tMs <= range.toMs)
          )
          .sort((a, b) => a.tMs - b.tMs)
        return range.limit === undefined ? all : all.slice(Math.max(0, all.length - range.limit))
      }),
    coverage: (only) =>
      Effect.sync(() =>
        [...companies.keys()]
          .filter((cik) => only === undefined || cik === only)
          .sort(byString)
          .map((cik) => coverageOf(cik, companies.get(cik) as Company))
      ),
    issuers: Effect.sync(() => {
      const names = namesByCik()
      const held = holdingIndex()
      const out: Array<Issuer> = []
      for (const cik of [...new Set([...companies.keys(), ...names.keys()])].sort(byString)) {
        const company = issuerOf(cik, names)
        if (company !== undefined) out.push({ company, coverage: coverageOf(cik, company, held) })
      }
      return out
    }),
    issuer: (cik) =>
      Effect.sync(() => {
        const company = issuerOf(cik, namesByCik(cik))
        return company === undefined ? undefined : { company, coverage: coverageOf(cik, company) }
      })
  }
}

/**
 * An in-memory equity store fixed at call time: every provision of the returned layer shares the same data (a
 * loader and the plane built from separate `Effect.provide` calls see one store).
 */
export const memoryEquityStore = (): Layer.Layer<EquityStore> => Layer.succeed(EquityStore)(makeMemoryEquityStore())

/** A fresh in-memory equity store per build of the layer. */
export const layerMemoryEquityStore: Layer.Layer<EquityStore> = Layer.suspend(() =>
  Layer.succeed(EquityStore)(makeMemoryEquityStore())
)
