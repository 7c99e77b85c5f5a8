/** @market-data/mcp: the MCP transport (being built). */
export {}
