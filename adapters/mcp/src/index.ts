/** @market-data/mcp: the MCP transport, a stateless Streamable HTTP server at `POST /api/mcp`. */
export * from "./JsonRpc.ts"
export * from "./McpApp.ts"
export * from "./Tools.ts"
