/** @market-data/infra: configuration, composition root and CLI. */

export * from "./Admin.ts"
export * from "./AppConfig.ts"
export * from "./Cli.ts"
export * from "./Main.ts"
export * from "./NodeDigest.ts"
export * from "./Planes.ts"
export * from "./Service.ts"
export * from "./Stores.ts"
export * from "./Telemetry.ts"
export * from "./Transports.ts"
