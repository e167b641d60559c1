"""Interactive sessions: the human's own agent (Claude Code, Codex, Cursor) working in the memory repository.

A session is a cycle too: numbered by the shared rule (`Workspace.cycle_for`), its LOG entry marked
`- Session: interactive`, held to Rule 0 and to the same memory semantics as a runner cycle. This package
gives it its memory and holds it to the protocol:

- `context`: the compact memory a session starts with (and gets back after a compaction), bounded in size;
- `record`: what the work tree looked like when the session started, to tell later whether it changed files;
- `hooks`: Claude Code's session hooks (SessionStart, Stop) as plain functions from its JSON to ours;
- `mcp_server`: the memory tools over MCP (stdio), for any agent that speaks it, on `mcp_session` (JSON-RPC)
  and `mcp_wire` (bounded lines), the standard library only;
- `launcher`: the committed `.gitmem/gitmem` every agent config runs gitmem through, and its one command line.
"""
