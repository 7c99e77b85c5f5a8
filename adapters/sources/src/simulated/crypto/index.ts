/** The simulated crypto market: the default feed of the crypto plane. */
export * from "./Apart.ts"
export * from "./Engine.ts"
export * from "./Feed.ts"
export * from "./History.ts"
export * from "./Profiles.ts"
export * from "./Quotes.ts"
export * from "./Random.ts"
export * from "./Universe.ts"
