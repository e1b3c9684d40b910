"""The MCP gateway: one MCP server in front of many, showing each client only the tools the
policy allows it and deciding every call before it reaches an upstream server.

`config` reads the servers file (the `mcpServers` format clients use) and the listener's
client map; `upstream` starts, supervises and calls the upstream servers; `decide` turns their
listings into the tools a run context sees and decides a call; `server` is the downstream MCP
server (stdio or streamable HTTP) built on the official SDK (the `gateway` extra).
"""
