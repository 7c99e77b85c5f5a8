/** @market-data/postgres: the store ports on server PostgreSQL and on embedded PGlite. */
export * from "./Bulk.ts"
export * from "./Database.ts"
export * from "./Errors.ts"
export * from "./PgDirectoryStore.ts"
export * from "./PgEquityStore.ts"
export * from "./PgLeaderLock.ts"
export * from "./PgMarketStore.ts"
export * from "./PgStores.ts"
