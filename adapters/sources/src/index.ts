/** @market-data/sources: data sources (simulated market, SEC filings and their parsers). */
export * from "./sec/index.ts"
