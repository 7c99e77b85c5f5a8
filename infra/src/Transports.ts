/**
 * The transports as the composition root mounts them: the HTTP transport on one Node server, with the MCP
 * endpoint mounted beside the API at `/api/mcp` and the catalog-version beacon on every answer. The HTTP and MCP
 * adapters are siblings that know nothing of each other; this is the one place that puts them together.
 */
import { layerHttpServer, type MountedRoute } from "@market-data/http"
import { CATALOG_VERSION_HEADER, catalogVersion, closeListenStreams, MCP_PATH, makeMcpEndpoint } from "@market-data/mcp"

/**
 * The MCP endpoint as a route of one HTTP server (each server its own endpoint). It answers CORS itself: unlike
 * the keyless-readable GET API (`*`), it checks `Origin` (absent, loopback on any port, or listed in
 * MARKET_DATA_ALLOWED_ORIGINS; otherwise 403) and echoes an allowed origin, because a browser page must not drive
 * a local or keyed MCP session.
 */
export const makeMcpRoute = (): MountedRoute => ({
  path: MCP_PATH,
  transport: "mcp",
  handle: makeMcpEndpoint(),
  // A stop ends the 2026-07-28 listen streams gracefully (their completion result) instead of waiting them out.
  shutdown: closeListenStreams
})

/** Headers every HTTP and MCP answer carries: the catalog version (a hash of the registry; `@market-data/mcp`). */
export const transportHeaders: Readonly<Record<string, string>> = { [CATALOG_VERSION_HEADER]: catalogVersion }

/**
 * The service's transports on `host:port`: the HTTP API, the docs page and the MCP endpoint, plus the
 * operator's routes (`/healthz`, `/readyz`, `/metrics`) when given. Requires the pipeline's services.
 */
export const layerTransports = (options: {
  readonly host: string
  readonly port: number
  readonly operational?: Parameters<typeof layerHttpServer>[0]["operational"]
  readonly limits?: Parameters<typeof layerHttpServer>[0]["limits"]
  /** The socket the start opened early (`EarlyListener.ts`), taken over instead of binding `host:port` anew. */
  readonly listening?: unknown
}) => layerHttpServer({ ...options, mounts: [makeMcpRoute()], headers: transportHeaders })
