"""actsagent where users already work: an MCP server, LangChain tools, a LangGraph Studio graph.

Each integration serves one database through the same strict guard as the CLI (``workspace``);
optional dependencies (``mcp``) are imported only by the module that needs them.
"""
