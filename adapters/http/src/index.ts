/** @market-data/http: the HTTP transport. */
export * from "./ConnectionLimits.ts"
export * from "./HttpApp.ts"
export * from "./NodeShapes.ts"
export * from "./OpenApi.ts"
export * from "./Query.ts"
export * from "./Server.ts"
export * from "./Telemetry.ts"
