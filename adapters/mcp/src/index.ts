/** @market-data/mcp: the MCP transport, a stateless Streamable HTTP server at `POST /api/mcp`. */
export * from "./JsonRpc.ts"
export * from "./McpApp.ts"
export * from "./Methods.ts"
export * from "./Origins.ts"
export * from "./ToolResult.ts"
export * from "./Tools.ts"
