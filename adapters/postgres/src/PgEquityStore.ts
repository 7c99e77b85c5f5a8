/**
 * The equity store on PostgreSQL (server or PGlite), over the tables of `infra/migrations/2026-11-23T0200_equity.ts`.
 * Filed figures live in `numeric` columns and come back as the same decimal strings; writes go in batches
 * through `insertInChunks`, idempotent on each table's natural key. Child rows (Form 4 transactions, 13F
 * holdings) are written before their report, so a reader never sees a report without its rows.
 */
import {
  type Company,
  type CompanyCoverage,
  type CompanyHoldings,
  type DailyBar,
  EquityStore,
  type Fact,
  type Filing,
  type Holding,
  type InsiderTransaction,
  type Issuer,
  type IssuerNames,
  issuerCompany,
  issuerNameKey,
  type OwnershipReport,
  type ReportingOwner,
  type TickerBars,
  type TickerEntry
} from "@market-data/core"
import { Effect, Layer } from "effect"
import { type Kysely, sql } from "kysely"
import { insertInChunks } from "./Bulk.ts"
import type { Database } from "./Database.ts"
import { num } from "./Database.ts"
import { query } from "./Errors.ts"

interface CompaniesTable {
  cik: string
  name: string
  tickers: unknown
  exchanges: unknown
  sic: string | null
  sic_description: string | null
  fiscal_year_end: string | null
  former_names: unknown
}

interface TickersTable {
  cik: string
  ticker: string
  name: string
  exchange: string | null
}

interface FactsTable {
  cik: string
  taxonomy: string
  concept: string
  unit: string
  start_date: string
  end_date: string
  accession: string
  value: string
  fy: number | null
  fp: string | null
  form: string
  filed: string
  frame: string | null
}

interface FilingsTable {
  cik: string
  accession: string
  form: string
  filed_at: string
  accepted_at: string
  report_date: string | null
  primary_document: string
  primary_doc_description: string | null
  items: string | null
  is_xbrl: boolean
  url: string
}

interface OwnershipReportsTable {
  accession: string
  issuer_cik: string
  form: string
  filed_at: string
  period_of_report: string
  issuer_name: string
  issuer_ticker: string
  owners: unknown
  date_of_original_submission: string | null
}

interface InsiderTransactionsTable {
  accession: string
  seq: number
  table_kind: "non_derivative" | "derivative"
  security_title: string
  transaction_date: string
  code: string
  acquired_disposed: "A" | "D"
  shares: string
  price_per_share: string | null
  shares_owned_after: string | null
  direct_indirect: "D" | "I"
  exercise_price: string | null
  underlying_shares: string | null
  footnotes: unknown
}

interface HoldingsReportsTable {
  accession: string
  filer_cik: string
  filer_name: string
  form: string
  filed_at: string
  report_period: string
}

interface HoldingsTable {
  accession: string
  seq: number
  name_of_issuer: string
  issuer_key: string
  title_of_class: string
  cusip: string
  value_usd: string
  shares: string
  shares_type: "SH" | "PRN"
  put_call: "Put" | "Call" | null
  investment_discretion: string
  voting_sole: string
  voting_shared: string
  voting_none: string
}

interface SecuritiesTable {
  cusip: string
  cik: string
}

interface BarsTable {
  cik: string
  ticker: string
  t_ms: string | number
  o: number
  h: number
  l: number
  c: number
  v: number
}

/** The equity tables as kysely sees them. */
export interface EquityTables {
  equity_companies: CompaniesTable
  equity_tickers: TickersTable
  equity_facts: FactsTable
  equity_filings: FilingsTable
  equity_ownership_reports: OwnershipReportsTable
  equity_insider_transactions: InsiderTransactionsTable
  equity_holdings_reports: HoldingsReportsTable
  equity_holdings: HoldingsTable
  equity_securities: SecuritiesTable
  equity_bars: BarsTable
}

/** Every equity table, children before parents (the order to empty them in). */
export const EquityTableNames: ReadonlyArray<keyof EquityTables> = [
  "equity_insider_transactions",
  "equity_ownership_reports",
  "equity_holdings",
  "equity_holdings_reports",
  "equity_securities",
  "equity_bars",
  "equity_facts",
  "equity_filings",
  "equity_tickers",
  "equity_companies"
]

const json = <A>(v: unknown): A => (typeof v === "string" ? (JSON.parse(v) as A) : (v as A))

const companyFromRow = (r: CompaniesTable): Company => ({
  cik: r.cik,
  name: r.name,
  tickers: json(r.tickers),
  exchanges: json(r.exchanges),
  sic: r.sic,
  sicDescription: r.sic_description,
  fiscalYearEnd: r.fiscal_year_end,
  formerNames: json(r.former_names)
})

const factFromRow = (r: FactsTable): Fact => ({
  taxonomy: r.taxonomy,
  concept: r.concept,
  unit: r.unit,
  value: r.value,
  start: r.start_date === "" ? null : r.start_date,
  end: r.end_date,
  fy: r.fy,
  fp: r.fp,
  form: r.form,
  accession: r.accession,
  filed: r.filed,
  frame: r.frame
})

const filingFromRow = (r: FilingsTable): Filing => ({
  accession: r.accession,
  form: r.form,
  filedAt: r.filed_at,
  acceptedAt: r.accepted_at,
  reportDate: r.report_date,
  primaryDocument: r.primary_document,
  primaryDocDescription: r.primary_doc_description,
  items: r.items,
  isXbrl: r.is_xbrl,
  url: r.url
})

const transactionFromRow = (r: InsiderTransactionsTable): InsiderTransaction => ({
  table: r.table_kind,
  securityTitle: r.security_title,
  transactionDate: r.transaction_date,
  code: r.code,
  acquiredDisposed: r.acquired_disposed,
  shares: r.shares,
  pricePerShare: r.price_per_share,
  sharesOwnedAfter: r.shares_owned_after,
  directIndirect: r.direct_indirect,
  exercisePrice: r.exercise_price,
  underlyingShares: r.underlying_shares,
  footnotes: json(r.footnotes)
})

const holdingFromRow = (r: HoldingsTable): Holding => ({
  nameOfIssuer: r.name_of_issuer,
  titleOfClass: r.title_of_class,
  cusip: r.cusip,
  valueUsd: r.value_usd,
  shares: r.shares,
  sharesType: r.shares_type,
  putCall: r.put_call,
  investmentDiscretion: r.investment_discretion,
  votingSole: r.voting_sole,
  votingShared: r.voting_shared,
  votingNone: r.voting_none
})

const barFromRow = (r: BarsTable): DailyBar => ({ tMs: num(r.t_ms), o: r.o, h: r.h, l: r.l, c: r.c, v: r.v })

export const makePgEquityStore = (database: Database): EquityStore["Service"] => {
  const db = database.db as unknown as Kysely<EquityTables>

  /** What names the CIKs (all, or the one given) beside their company rows: ticker rows and Form 4 issuers. */
  const namesOf = (only?: string) =>
    Effect.gen(function* () {
      const listed = yield* query("equity.issuers.tickers", () => {
        let q = db.selectFrom("equity_tickers").selectAll()
        if (only !== undefined) q = q.where("cik", "=", only)
        return q.execute()
      })
      // The newest report per issuer and ticker (as many rows as issuers and their tickers, not reports), of the
      // issuers no ticker row names: a listed company is named and traded as the list says (`issuerCompany`).
      const form4 = yield* query("equity.issuers.form4", () => {
        let q = db
          .selectFrom("equity_ownership_reports as o")
          .select(["o.issuer_cik", "o.issuer_ticker", "o.issuer_name", "o.filed_at", "o.accession"])
          .distinctOn(["o.issuer_cik", "o.issuer_ticker"])
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(selectFrom("equity_tickers as t").select(sql`1`.as("one")).whereRef("t.cik", "=", "o.issuer_cik"))
            )
          )
        if (only !== undefined) q = q.where("o.issuer_cik", "=", only)
        return q
          .orderBy("o.issuer_cik")
          .orderBy("o.issuer_ticker")
          .orderBy(sql`filed_at collate "C" desc`)
          .orderBy(sql`accession collate "C" desc`)
          .execute()
      })
      const out = new Map<string, { listed: Array<TickerEntry>; form4: IssuerNames["form4"]; newest: string }>()
      const at = (cik: string) => {
        let n = out.get(cik)
        if (n === undefined) {
          n = { listed: [], form4: undefined, newest: "" }
          out.set(cik, n)
        }
        return n
      }
      for (const t of listed)
        at(t.cik).listed.push({ cik: t.cik, ticker: t.ticker, name: t.name, exchange: t.exchange })
      for (const r of form4) {
        const n = at(r.issuer_cik)
        const stamp = `${r.filed_at}|${r.accession}`
        const newer = stamp > n.newest
        if (newer) n.newest = stamp
        n.form4 = {
          name: newer || n.form4 === undefined ? r.issuer_name : n.form4.name,
          tickers: [...(n.form4?.tickers ?? []), r.issuer_ticker]
        }
      }
      return new Map([...out].map(([cik, n]): [string, IssuerNames] => [cik, { listed: n.listed, form4: n.form4 }]))
    })

  /** The company the CIK is listed as (`issuerCompany`), or undefined when nothing names it. */
  const knownCompany = (cik: string) =>
    Effect.gen(function* () {
      const stored = yield* query("equity.company", () =>
        db.selectFrom("equity_companies").selectAll().where("cik", "=", cik).executeTakeFirst()
      )
      const names = (yield* namesOf(cik)).get(cik) ?? { listed: [], form4: undefined }
      return issuerCompany(cik, stored === undefined ? undefined : companyFromRow(stored), names)
    })

  /** The company's CUSIPs, or (without any) the normalized issuer name its 13F rows are matched by. */
  const matchOf = (cik: string) =>
    Effect.gen(function* () {
      const cusips = yield* query("equity.securities", () =>
        db.selectFrom("equity_securities").select("cusip").where("cik", "=", cik).execute()
      )
      if (cusips.length > 0) return { cusips: cusips.map((c) => c.cusip), key: undefined }
      const company = yield* knownCompany(cik)
      const key = company === undefined ? "" : issuerNameKey(company.name)
      return { cusips: [] as Array<string>, key: key.length > 0 ? key : undefined }
    })

  const holdings = (cik: string): Effect.Effect<CompanyHoldings> =>
    Effect.gen(function* () {
      const match = yield* matchOf(cik)
      if (match.cusips.length === 0 && match.key === undefined) return { reports: [], holdings: [] }
      const rows = yield* query("equity.holdings", () => {
        let q = db.selectFrom("equity_holdings").selectAll()
        q =
          match.cusips.length > 0
            ? q.where(sql<boolean>`upper(cusip) in (${sql.join(match.cusips)})`)
            : q.where("issuer_key", "=", match.key as string)
        return q.orderBy("accession").orderBy("seq").execute()
      })
      if (rows.length === 0) return { reports: [], holdings: [] }
      const accessions = [...new Set(rows.map((r) => r.accession))]
      const filers = yield* query("equity.holdings.filers", () =>
        db
          .selectFrom("equity_holdings_reports")
          .select("filer_cik")
          .distinct()
          .where("accession", "in", accessions)
          .execute()
      )
      if (filers.length === 0) return { reports: [], holdings: [] }
      const reports = yield* query("equity.holdings.reports", () =>
        db
          .selectFrom("equity_holdings_reports")
          .selectAll()
          .where(
            "filer_cik",
            "in",
            filers.map((f) => f.filer_cik)
          )
          .orderBy(sql`accession collate "C"`)
          .execute()
      )
      const known = new Set(reports.map((r) => r.accession))
      return {
        reports: reports.map((r) => ({
          filerCik: r.filer_cik,
          filerName: r.filer_name,
          accession: r.accession,
          form: r.form,
          filedAt: r.filed_at,
          reportPeriod: r.report_period
        })),
        // Rows of a report whose parent row is not written yet are not visible.
        holdings: rows
          .filter((r) => known.has(r.accession))
          .map((r) => ({ accession: r.accession, holding: holdingFromRow(r) }))
      }
    })

  /**
   * What is held for each of the given companies (by CIK): for the one named by `only`, or for all of them with
   * one grouped query per table, filtered by no list of CIKs (listing every issuer reads no company's rows).
   */
  const coverageOf = (
    companies: ReadonlyArray<{ readonly cik: string; readonly name: string }>,
    only: string | undefined
  ): Effect.Effect<ReadonlyArray<CompanyCoverage>> =>
    Effect.gen(function* () {
      if (companies.length === 0) return []
      const facts = yield* query("equity.coverage.facts", () =>
        db
          .selectFrom("equity_facts")
          .select(["cik", sql<string>`count(*)`.as("n"), sql<string | null>`max(filed)`.as("last")])
          .$if(only !== undefined, (q) => q.where("cik", "=", only as string))
          .groupBy("cik")
          .execute()
      )
      const filings = yield* query("equity.coverage.filings", () =>
        db
          .selectFrom("equity_filings")
          .select(["cik", sql<string>`count(*)`.as("n"), sql<string | null>`max(filed_at)`.as("last")])
          .$if(only !== undefined, (q) => q.where("cik", "=", only as string))
          .groupBy("cik")
          .execute()
      )
      const bars = yield* query("equity.coverage.bars", () =>
        db
          .selectFrom("equity_bars")
          .select(["cik", "ticker", sql<string>`count(*)`.as("n"), sql<string>`max(t_ms)`.as("last")])
          .$if(only !== undefined, (q) => q.where("cik", "=", only as string))
          .groupBy(["cik", "ticker"])
          .execute()
      )
      const byCusip = yield* query("equity.coverage.holders", () =>
        db
          .selectFrom("equity_securities as s")
          .select("s.cik")
          .distinct()
          .$if(only !== undefined, (q) => q.where("s.cik", "=", only as string))
          .where(({ exists, selectFrom }) =>
            exists(
              selectFrom("equity_holdings as h")
                .innerJoin("equity_holdings_reports as r", "r.accession", "h.accession")
                .select(sql`1`.as("one"))
                .where(sql<boolean>`upper(h.cusip) = s.cusip`)
            )
          )
          .execute()
      )
      const withCusips = yield* query("equity.coverage.securities", () =>
        db
          .selectFrom("equity_securities")
          .select("cik")
          .distinct()
          .$if(only !== undefined, (q) => q.where("cik", "=", only as string))
          .execute()
      )
      const hasCusips = new Set(withCusips.map((r) => r.cik))
      const nameKeys = [
        ...new Set(
          companies
            .filter((c) => !hasCusips.has(c.cik))
            .map((c) => issuerNameKey(c.name))
            .filter((k) => k.length > 0)
        )
      ]
      const byName =
        nameKeys.length === 0
          ? []
          : yield* query("equity.coverage.names", () =>
              db
                .selectFrom("equity_holdings as h")
                .innerJoin("equity_holdings_reports as r", "r.accession", "h.accession")
                .select("h.issuer_key")
                .distinct()
                .where("h.issuer_key", "in", nameKeys)
                .execute()
            )
      const held = new Set([...byCusip.map((r) => r.cik)])
      const heldNames = new Set(byName.map((r) => r.issuer_key))
      const index = <R extends { cik: string }>(rows: ReadonlyArray<R>) => new Map(rows.map((r) => [r.cik, r]))
      const f = index(facts)
      const fl = index(filings)
      const b = new Map<string, Array<TickerBars>>()
      for (const r of bars) {
        const list = b.get(r.cik) ?? []
        list.push({ ticker: r.ticker, bars: num(r.n), lastBarMs: num(r.last) })
        b.set(r.cik, list)
      }
      for (const list of b.values()) list.sort((x, y) => (x.ticker < y.ticker ? -1 : x.ticker > y.ticker ? 1 : 0))
      return companies.map((c): CompanyCoverage => {
        const lastFact = f.get(c.cik)?.last ?? null
        const lastFiling = fl.get(c.cik)?.last ?? null
        const lastFiledAt =
          lastFact === null
            ? lastFiling
            : lastFiling === null
              ? lastFact
              : lastFact > lastFiling
                ? lastFact
                : lastFiling
        const tickerBars = b.get(c.cik) ?? []
        return {
          cik: c.cik,
          facts: num(f.get(c.cik)?.n ?? 0),
          filings: num(fl.get(c.cik)?.n ?? 0),
          lastFiledAt,
          bars: tickerBars.reduce((n, t) => n + t.bars, 0),
          lastBarMs: tickerBars.length === 0 ? null : Math.max(...tickerBars.map((t) => t.lastBarMs)),
          tickerBars,
          hasHolders: hasCusips.has(c.cik) ? held.has(c.cik) : heldNames.has(issuerNameKey(c.name))
        }
      })
    })

  return {
    putCompany: (c) =>
      insertInChunks(
        db,
        "equity_companies",
        [
          {
            cik: c.cik,
            name: c.name,
            tickers: JSON.stringify(c.tickers),
            exchanges: JSON.stringify(c.exchanges),
            sic: c.sic,
            sic_description: c.sicDescription,
            fiscal_year_end: c.fiscalYearEnd,
            former_names: JSON.stringify(c.formerNames)
          }
        ],
        {
          key: ["cik"],
          update: ["name", "tickers", "exchanges", "sic", "sic_description", "fiscal_year_end", "former_names"]
        }
      ).pipe(Effect.asVoid),

    putTickers: (entries) =>
      insertInChunks(
        db,
        "equity_tickers",
        dedupeBy(entries, (e) => `${e.cik}|${e.ticker}`, "last").map((e) => ({
          cik: e.cik,
          ticker: e.ticker,
          name: e.name,
          exchange: e.exchange
        })),
        { key: ["cik", "ticker"], update: ["name", "exchange"] }
      ),

    putFacts: (cik, facts) =>
      insertInChunks(
        db,
        "equity_facts",
        dedupeBy(facts, (f) => [f.taxonomy, f.concept, f.unit, f.start ?? "", f.end, f.accession].join("|")).map(
          (f) => ({
            cik,
            taxonomy: f.taxonomy,
            concept: f.concept,
            unit: f.unit,
            start_date: f.start ?? "",
            end_date: f.end,
            accession: f.accession,
            value: f.value,
            fy: f.fy,
            fp: f.fp,
            form: f.form,
            filed: f.filed,
            frame: f.frame
          })
        ),
        { key: ["cik", "concept", "taxonomy", "unit", "start_date", "end_date", "accession"] }
      ),

    putFilings: (cik, filings) =>
      insertInChunks(
        db,
        "equity_filings",
        dedupeBy(filings, (f) => f.accession).map((f) => ({
          cik,
          accession: f.accession,
          form: f.form,
          filed_at: f.filedAt,
          accepted_at: f.acceptedAt,
          report_date: f.reportDate,
          primary_document: f.primaryDocument,
          primary_doc_description: f.primaryDocDescription,
          items: f.items,
          is_xbrl: f.isXbrl,
          url: f.url
        })),
        { key: ["cik", "accession"] }
      ),

    putOwnershipReports: (reports) =>
      Effect.gen(function* () {
        const unique = dedupeBy(reports, (r) => r.accession)
        yield* insertInChunks(
          db,
          "equity_insider_transactions",
          unique.flatMap((r) =>
            r.transactions.map((t, seq) => ({
              accession: r.accession,
              seq,
              table_kind: t.table,
              security_title: t.securityTitle,
              transaction_date: t.transactionDate,
              code: t.code,
              acquired_disposed: t.acquiredDisposed,
              shares: t.shares,
              price_per_share: t.pricePerShare,
              shares_owned_after: t.sharesOwnedAfter,
              direct_indirect: t.directIndirect,
              exercise_price: t.exercisePrice,
              underlying_shares: t.underlyingShares,
              footnotes: JSON.stringify(t.footnotes)
            }))
          ),
          { key: ["accession", "seq"] }
        )
        return yield* insertInChunks(
          db,
          "equity_ownership_reports",
          unique.map((r) => ({
            accession: r.accession,
            issuer_cik: r.issuerCik,
            form: r.form,
            filed_at: r.filedAt,
            period_of_report: r.periodOfReport,
            issuer_name: r.issuerName,
            issuer_ticker: r.issuerTicker,
            owners: JSON.stringify(r.owners),
            date_of_original_submission: r.dateOfOriginalSubmission
          })),
          { key: ["accession"] }
        )
      }),

    putHoldingsReports: (reports) =>
      Effect.gen(function* () {
        const unique = dedupeBy(reports, (r) => r.accession)
        yield* insertInChunks(
          db,
          "equity_holdings",
          unique.flatMap((r) =>
            r.holdings.map((h, seq) => ({
              accession: r.accession,
              seq,
              name_of_issuer: h.nameOfIssuer,
              issuer_key: issuerNameKey(h.nameOfIssuer),
              title_of_class: h.titleOfClass,
              cusip: h.cusip,
              value_usd: h.valueUsd,
              shares: h.shares,
              shares_type: h.sharesType,
              put_call: h.putCall,
              investment_discretion: h.investmentDiscretion,
              voting_sole: h.votingSole,
              voting_shared: h.votingShared,
              voting_none: h.votingNone
            }))
          ),
          { key: ["accession", "seq"] }
        )
        return yield* insertInChunks(
          db,
          "equity_holdings_reports",
          unique.map((r) => ({
            accession: r.accession,
            filer_cik: r.filerCik,
            filer_name: r.filerName,
            form: r.form,
            filed_at: r.filedAt,
            report_period: r.reportPeriod
          })),
          { key: ["accession"] }
        )
      }),

    putSecurities: (cik, cusips) =>
      insertInChunks(
        db,
        "equity_securities",
        [...new Set(cusips.map((c) => c.toUpperCase()))].map((cusip) => ({ cusip, cik })),
        { key: ["cusip"], update: ["cik"] }
      ).pipe(Effect.asVoid),

    putBars: (cik, ticker, bars) =>
      insertInChunks(
        db,
        "equity_bars",
        dedupeBy(bars, (b) => String(b.tMs), "last").map((b) => ({
          cik,
          ticker,
          t_ms: b.tMs,
          o: b.o,
          h: b.h,
          l: b.l,
          c: b.c,
          v: b.v
        })),
        { key: ["cik", "ticker", "t_ms"], update: ["o", "h", "l", "c", "v"] }
      ),

    companies: query("equity.companies", () =>
      db.selectFrom("equity_companies").selectAll().orderBy(sql`cik collate "C"`).execute()
    ).pipe(Effect.map((rows) => rows.map(companyFromRow))),

    company: (cik) =>
      query("equity.company", () =>
        db.selectFrom("equity_companies").selectAll().where("cik", "=", cik).executeTakeFirst()
      ).pipe(Effect.map((r) => (r === undefined ? undefined : companyFromRow(r)))),

    tickers: query("equity.tickers", () =>
      db
        .selectFrom("equity_tickers")
        .selectAll()
        .orderBy(sql`cik collate "C"`)
        .orderBy(sql`ticker collate "C"`)
        .execute()
    ).pipe(
      Effect.map((rows) => rows.map((r) => ({ cik: r.cik, ticker: r.ticker, name: r.name, exchange: r.exchange })))
    ),

    facts: (cik, concepts) =>
      Effect.suspend(() => {
        if (concepts !== undefined && concepts.length === 0) return Effect.succeed([])
        return query("equity.facts", () => {
          let q = db.selectFrom("equity_facts").selectAll().where("cik", "=", cik)
          if (concepts !== undefined) q = q.where("concept", "in", [...concepts])
          return q.execute()
        }).pipe(Effect.map((rows) => rows.map(factFromRow)))
      }),

    filings: (cik) =>
      query("equity.filings", () =>
        db
          .selectFrom("equity_filings")
          .selectAll()
          .where("cik", "=", cik)
          .orderBy(sql`accepted_at collate "C" desc`)
          .orderBy(sql`accession collate "C" desc`)
          .execute()
      ).pipe(Effect.map((rows) => rows.map(filingFromRow))),

    ownershipReports: (issuerCik) =>
      Effect.gen(function* () {
        const reports = yield* query("equity.ownership", () =>
          db
            .selectFrom("equity_ownership_reports")
            .selectAll()
            .where("issuer_cik", "=", issuerCik)
            .orderBy(sql`filed_at collate "C"`)
            .orderBy(sql`accession collate "C"`)
            .execute()
        )
        if (reports.length === 0) return []
        const transactions = yield* query("equity.ownership.transactions", () =>
          db
            .selectFrom("equity_insider_transactions")
            .selectAll()
            .where(
              "accession",
              "in",
              reports.map((r) => r.accession)
            )
            .orderBy("accession")
            .orderBy("seq")
            .execute()
        )
        const byAccession = new Map<string, Array<InsiderTransaction>>()
        for (const t of transactions) {
          const list = byAccession.get(t.accession) ?? []
          list.push(transactionFromRow(t))
          byAccession.set(t.accession, list)
        }
        return reports.map(
          (r): OwnershipReport => ({
            form: r.form,
            accession: r.accession,
            filedAt: r.filed_at,
            periodOfReport: r.period_of_report,
            issuerCik: r.issuer_cik,
            issuerName: r.issuer_name,
            issuerTicker: r.issuer_ticker,
            owners: json<ReadonlyArray<ReportingOwner>>(r.owners),
            transactions: byAccession.get(r.accession) ?? [],
            dateOfOriginalSubmission: r.date_of_original_submission
          })
        )
      }),

    holdings,

    bars: (cik, ticker, range) =>
      query("equity.bars", () => {
        let q = db.selectFrom("equity_bars").selectAll().where("cik", "=", cik).where("ticker", "=", ticker)
        if (range.fromMs !== undefined) q = q.where("t_ms", ">=", range.fromMs)
        if (range.toMs !== undefined) q = q.where("t_ms", "<=", range.toMs)
        q = q.orderBy("t_ms", "desc")
        if (range.limit !== undefined) q = q.limit(range.limit)
        return q.execute()
      }).pipe(Effect.map((rows) => rows.map(barFromRow).reverse())),

    coverage: (only) =>
      Effect.gen(function* () {
        const companies = yield* query("equity.coverage.companies", () => {
          let q = db.selectFrom("equity_companies").select(["cik", "name"])
          if (only !== undefined) q = q.where("cik", "=", only)
          return q.orderBy(sql`cik collate "C"`).execute()
        })
        return yield* coverageOf(companies, only)
      }),

    issuers: Effect.gen(function* () {
      const stored = yield* query("equity.companies", () => db.selectFrom("equity_companies").selectAll().execute())
      const byCik = new Map(stored.map((r) => [r.cik, companyFromRow(r)]))
      const names = yield* namesOf()
      const known: Array<Company> = []
      for (const cik of [...new Set([...byCik.keys(), ...names.keys()])].sort(byString)) {
        const company = issuerCompany(cik, byCik.get(cik), names.get(cik) ?? { listed: [], form4: undefined })
        if (company !== undefined) known.push(company)
      }
      const coverage = new Map((yield* coverageOf(known, undefined)).map((c) => [c.cik, c]))
      return known.map((company): Issuer => ({ company, coverage: coverage.get(company.cik) as CompanyCoverage }))
    }),

    issuer: (cik) =>
      Effect.gen(function* () {
        const company = yield* knownCompany(cik)
        if (company === undefined) return undefined
        const coverage = (yield* coverageOf([company], cik))[0] as CompanyCoverage
        return { company, coverage }
      })
  }
}

/**
 * One row per key, as the memory twin keeps them: the first of a batch where the store ignores repeats
 * (`do nothing`), the last where a repeat replaces (`keep: "last"`, the upserted tables).
 */
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const dedupeBy = <A>(xs: ReadonlyArray<A>, key: (a: A) => string, keep: "first" | "last" = "first"): Array<A> => {
  const seen = new Map<string, A>()
  for (const x of xs) if (keep === "last" || !seen.has(key(x))) seen.set(key(x), x)
  return [...seen.values()]
}

/** The equity store on an open database (PGlite or PostgreSQL) whose migrations include the equity tables. */
export const layerPgEquityStore = (database: Database): Layer.Layer<EquityStore> =>
  Layer.succeed(EquityStore)(makePgEquityStore(database))
