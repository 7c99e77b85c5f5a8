/**
 * @market-data/core: the pure library at the centre of the service. Operations, their registry, the request
 * pipeline and the ports its adapters implement. Imports `effect` and `decimal.js` only.
 */
export * from "./Admin.ts"
export * from "./AssetId.ts"
export * from "./Catalog.ts"
export * from "./Discovery.ts"
export * from "./Docs.ts"
export * from "./Errors.ts"
export * from "./Idempotency.ts"
export * from "./Keys.ts"
export * from "./Ledger.ts"
export * from "./Params.ts"
export * from "./Pipeline.ts"
export * from "./RateLimit.ts"
export * from "./Registry.ts"
export * as Results from "./Results.ts"
export * from "./PerAsset.ts"
export * from "./Planes.ts"
export * from "./crypto/Market.ts"
export * from "./crypto/Assets.ts"
