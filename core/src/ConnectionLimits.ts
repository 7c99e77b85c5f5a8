/**
 * The HTTP transport's connection and body limits, as served in docs section `access`: the defaults, which the
 * operator can change (`MARKET_DATA_MAX_CONNECTIONS`, `MARKET_DATA_MAX_CONNECTIONS_PER_CLIENT`,
 * `MARKET_DATA_BODY_TIMEOUT_MS`). The transport enforces them (`ConnectionLimits.ts` in the HTTP adapter).
 */

/** Most connections the server holds open at once, from every client together. */
export const DEFAULT_MAX_CONNECTIONS = 1024
/**
 * Most connections open at once from one client address (an IPv6 one by its /64); behind a trusted proxy, most
 * requests in flight from one forwarded client address.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 128
/** Longest time, in milliseconds, a request's body may take to arrive whole after its headers. */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000
