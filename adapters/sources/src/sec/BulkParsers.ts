/**
 * The parsers the bulk ingest's parsing worker needs, and nothing else (`@market-data/sources/bulk-parsers`): a
 * worker thread loads its modules afresh, and the package's index (every connector, the simulated market) or even
 * every SEC parser cost it about half a second of CPU at each ingest's start.
 */
export { type CompanyFactsHeader, CompanyFactsStream } from "./CompanyFactsStream.ts"
export { parseSubmissions, parseSubmissionsPage } from "./Submissions.ts"
