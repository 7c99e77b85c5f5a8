/** The simulated equity plane: fictional companies whose filings are generated in SEC formats and parsed back. */
export { type CompanyProfile, SimulatedCompanies, SimulatedManagers } from "./Companies.ts"
export {
  generatedManagers,
  generatedProfiles,
  isSimulatedCik,
  MaxGeneratedCompanies,
  SimulatedGeneratedCompanies
} from "./Generated.ts"
export type { OwnershipDocumentText } from "./Insiders.ts"
export type { ThirteenFTexts } from "./Institutions.ts"
export * from "./load.ts"
export type { SimulatedDailyBar } from "./Prices.ts"
export {
  type SimulatedEquity,
  SimulatedEquityDefaultAsOf,
  type SimulatedEquityDocuments,
  SimulatedEquityVersion,
  simulatedBarsByTicker,
  simulatedEquity
} from "./SimulatedEquity.ts"
