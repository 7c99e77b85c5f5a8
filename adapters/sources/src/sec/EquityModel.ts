/** The equity model the parsers produce, from the core; the package's modules import it from here. */
export type {
  Company,
  Fact,
  Filing,
  Holding,
  HoldingsReport,
  InsiderTransaction,
  OwnershipReport,
  ReportingOwner,
  Submissions,
  TickerEntry
} from "@market-data/core"
