/**
 * Which browser origins may call `/api/mcp`. A request without `Origin` (servers, CLIs, agents) is accepted;
 * with one, it must be loopback (any port) or listed in `MARKET_DATA_ALLOWED_ORIGINS`, else 403. This is the
 * transport spec's DNS-rebinding defence: a rebinding page always carries its own, foreign origin.
 */
import { Config, Effect } from "effect"

/** The environment variable naming extra browser origins allowed to call `/api/mcp` (comma-separated). */
export const ALLOWED_ORIGINS_VARIABLE = "MARKET_DATA_ALLOWED_ORIGINS"

/** `scheme://host[:port]` of an origin, normalized, or undefined when it is not a URL origin. */
const normalizeOrigin = (text: string): string | undefined => {
  try {
    const url = new URL(text.trim())
    return url.origin === "null" ? undefined : url.origin
  } catch {
    return undefined
  }
}

/**
 * Parses `MARKET_DATA_ALLOWED_ORIGINS`: comma-separated origins such as `https://app.example.com`. Returns the
 * normalized origins, or a message naming the first entry that is not an origin (for start-up validation).
 */
export const parseAllowedOrigins = (text: string): ReadonlyArray<string> | { readonly problem: string } => {
  const out: Array<string> = []
  for (const entry of text.split(",")) {
    if (entry.trim().length === 0) continue
    const origin = normalizeOrigin(entry)
    if (origin === undefined) {
      return {
        problem: `${ALLOWED_ORIGINS_VARIABLE}: ${JSON.stringify(entry.trim())} is not an origin like https://app.example.com`
      }
    }
    out.push(origin)
  }
  return out
}

/** The allowed origins as configured (through Effect `Config`, so from the environment by default). */
export const allowedOriginsConfig: Config.Config<string> = Config.String(ALLOWED_ORIGINS_VARIABLE).pipe(
  Config.withDefault("")
)

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/** Loopback origins (any port) are pages served from this machine, such as a local development UI. */
export const isLoopbackOrigin = (origin: string): boolean => {
  try {
    const url = new URL(origin)
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
  } catch {
    return false
  }
}

/**
 * Whether a request carrying `origin` is accepted. The configuration is read per request (it is one short
 * variable); an entry that is not an origin matches nothing (start-up validation belongs to the composition
 * root, with `parseAllowedOrigins`).
 */
export const originAllowed = (origin: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    if (isLoopbackOrigin(origin)) return true
    const normalized = normalizeOrigin(origin)
    if (normalized === undefined) return false
    const text = yield* Effect.orElseSucceed(allowedOriginsConfig, () => "")
    return text.split(",").some((entry) => entry.trim().length > 0 && normalizeOrigin(entry) === normalized)
  })
