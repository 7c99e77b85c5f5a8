/**
 * The equity model the parsers produce, from the core. The core's entry does not export `equity/Model.ts` (yet),
 * so it is reached here, in one place, by path; everything in this package imports it from this module.
 */
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
} from "../../../../core/src/equity/Model.ts"
