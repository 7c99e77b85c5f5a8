/**
 * The equity plane of the core: the model of what companies file, the statements and TTM logic, insider and
 * holders rules, valuation, the US session calendar, the `EquityStore` port, the plane's operations and its
 * documentation. Meant to be exported from the core's entry as a namespace (`export * as Equity from
 * "./equity/index.ts"`), since some helper names (dates, bars) are generic.
 */
export type * from "./BulkLoad.ts"
export * from "./EquityDoc.ts"
export * from "./EquityPlane.ts"
export * from "./EquityStore.ts"
export * from "./Exact.ts"
export * from "./Holders.ts"
export * from "./Insider.ts"
export * from "./MarketHours.ts"
export type * from "./Model.ts"
export * from "./Statements.ts"
export * from "./Valuation.ts"
