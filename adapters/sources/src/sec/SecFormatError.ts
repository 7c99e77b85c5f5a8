import * as Data from "effect/Data"

/** The SEC formats the parsers read. */
export type SecFormat =
  | "companyfacts"
  | "submissions"
  | "submissions_page"
  | "form4"
  | "13f_information_table"
  | "13f_primary_document"
  | "company_tickers"
  | "company_tickers_exchange"
  | "daily_form_index"
  | "directory_listing"
  | "latest_filings_feed"

/**
 * A document that is not what its SEC format promises: not JSON/XML, a missing or mistyped field, a value that
 * is not a decimal. `message` names the place (a JSON path or an XML element) and what was wrong there.
 */
export class SecFormatError extends Data.TaggedError("SecFormatError")<{
  readonly format: SecFormat
  readonly message: string
}> {}
