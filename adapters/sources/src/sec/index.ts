/** Parsers for the SEC's own formats, producing the core's equity model with every filed figure exact. */
export { type CompanyFacts, parseCompanyFacts } from "./CompanyFacts.ts"
export { type CompanyFactsHeader, CompanyFactsStream } from "./CompanyFactsStream.ts"
export {
  type DailyIndexEntry,
  dailyIndexDays,
  parseDailyFormIndex,
  parseDirectoryListing,
  parseLatestFilingsAtom
} from "./DailyIndex.ts"
export { detectSecFormat } from "./Detect.ts"
export { type FilingReference, parseOwnershipDocument, parseOwnershipDocuments, supersedeAmendments } from "./Form4.ts"
export { newYorkToUtcMs } from "./NewYorkTime.ts"
export { type SecFormat, SecFormatError } from "./SecFormatError.ts"
export { acceptanceToUtc, filingDocumentUrl, parseSubmissions, parseSubmissionsPage } from "./Submissions.ts"
export {
  checkThirteenFTotals,
  parseThirteenF,
  parseThirteenFInformationTable,
  parseThirteenFPrimaryDocument,
  type ThirteenFCover,
  ThirteenFDollarValuesFrom,
  type ThirteenFTotalsCheck,
  type ThirteenFValueUnit,
  thirteenFImpliedValueUnit,
  thirteenFValueMultiplier,
  thirteenFValueUsd
} from "./ThirteenF.ts"
export { parseCompanyTickers, parseCompanyTickersExchange } from "./Tickers.ts"
