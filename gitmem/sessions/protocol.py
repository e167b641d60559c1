"""The memory protocol as sessions are taught it: the MCP server's instructions and tool descriptions, and the
text of the managed blocks `gitmem init --agent` writes. Lean: no MCP SDK here, so `init` and the hooks can
read the tool names without it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gitmem.memory.operations import OPERATIONS, operation_named, usage
from gitmem.sessions.launcher import LAUNCHER

if TYPE_CHECKING:
    from gitmem.config import Config

SERVER = "gitmem"             # the MCP server's name in .mcp.json, .cursor/mcp.json and .codex/config.toml
RESOLVE_NAMES = ("answer_decision", "resolve_decision", "decision_answer")
INSTRUCTIONS = (
    "gitmem is this project's long-term memory: five markdown files in git (NOW, DECISIONS, LOG, LESSONS, RULES). "
    "Protocol for every session or cycle: read the memory first (the context tool, or the session-start context "
    "you were given); do one task; then write exactly one LOG entry (log_entry) and one NOW block (now_block). "
    "A session that built nothing still logs, outcome no-build, saying why (Rule 0). Questions for the human go "
    "to ask_decision; only the human answers decisions. Record real mistakes with add_lesson and later evidence "
    "with confirm_lesson. Use recall only when the task needs the past. Never edit the memory files by hand; "
    "these tools write files only: commit them together with your work.")
# The memory tools' descriptions are the cycle's own (gitmem.memory.operations, recall's gitmem.agents.schemas).
EXTRA_TOOLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("context", "The memory to start from. Default: the compact session context (proven rules, top NOW block, "
                "pending and newly resolved decisions, recent LOG lines). full=true: the whole reading budget "
                "of a cycle (RULES whole, NOW, DECISIONS, the last LOG entries, the current ROADMAP section).",
     {"full": {"type": "boolean", "description": "the whole cycle context instead of the compact one"}}),
    ("pending", "The decisions waiting on the human, oldest first, with their age and recommendation.", {}),
    ("status", "Memory health as JSON: last cycle, today's cycles, the Rule 0 streak, decisions waiting, lessons "
               "awaiting confirmation, rules against their cap, the context budget.", {}),
)
RESOURCES = (("gitmem://rules", "RULES", "RULES: who the agent is, its priorities, its proven rules"),
             ("gitmem://now", "NOW", "The top NOW block: the current state"),
             ("gitmem://decisions/pending", "Pending decisions", "The decisions waiting on the human"))


def tool_names() -> tuple[str, ...]:
    """The MCP server's tools, in the order it lists them."""
    from gitmem.agents.schemas import MEMORY_TOOLS

    return (*(spec["name"] for spec in MEMORY_TOOLS), *(name for name, _, _ in EXTRA_TOOLS))


# `gitmem` subcommands an agent may run without asking: they write memory in canonical form (never a decision's
# answer: `gitmem decision answer` records the human's identity) or only read it.
AGENT_COMMANDS = (*(f"gitmem {operation.command}" for operation in OPERATIONS), "gitmem recall", "gitmem context",
                  "gitmem pending", "gitmem status", "gitmem check")
# The same, through the committed launcher, for a shell without gitmem on PATH (a login shell, no venv).
LAUNCHED = tuple(f"sh {LAUNCHER} {command.removeprefix('gitmem ')}" for command in AGENT_COMMANDS)


SHARED = "agents"     # the one block in AGENTS.md, which every CLI that reads AGENTS.md shares


def protocol_text(config: Config, *, agent: str) -> str:
    """The memory protocol for an agent's instructions file, in Markdown: `agent` SHARED for the one block in
    AGENTS.md (Claude Code imports it from CLAUDE.md, Codex, OpenCode, Qwen Code and Copilot CLI read it, Gemini
    CLI by its `context.fileName`), or "cursor" for Cursor's rule."""
    paths = {role: config.path(role) for role in ("now", "decisions", "log", "lessons", "rules")}
    # Each CLI's own memory as its pinned release (gitmem.scaffold.agent_clis.PINNED) keeps it: Gemini CLI 0.61.0
    # has no `save_memory`, its model edits the per-user GEMINI.md directly and keeps a private project memory
    # (gitmem.interop.gemini); Qwen Code still has `save_memory`.
    own = {SHARED: " Keep what you learn there, not in an agent CLI's per-user memory (Claude Code's auto memory "
                   "and `#` notes, Codex's memories, Gemini CLI's per-user GEMINI.md and its private project "
                   "memory, Qwen Code's `save_memory` and auto-memory, GitHub Copilot CLI's `store_memory`): the "
                   "next session and the scheduled agent read only the repository.",
           "cursor": " Keep what you learn there, not in Cursor's per-user memories: the next session and the "
                     "scheduled agent read only the repository."}[agent]
    start = ("the memory the session-start hook gives you (Claude Code, Copilot CLI), or the `context` tool of the "
             "gitmem MCP server (or `gitmem context`)" if agent == SHARED
             else "the memory: the `context` tool of the gitmem MCP server (or `gitmem context`)")
    return f"""## Memory: gitmem

This repository's long-term memory is gitmem: {paths['now']}, {paths['decisions']}, {paths['log']}, \
{paths['lessons']} and {paths['rules']}, in git.{own}

- Start from {start}: proven rules, the top NOW block, pending and newly resolved decisions, recent LOG.
- A session is a cycle: do one task. At the end write exactly one LOG entry and one NOW block, with the gitmem MCP
  tools `log_entry` and `now_block`, or `{usage(operation_named("log_entry"), optional=False)}`
  and `{usage(operation_named("now_block"), optional=False)}`.
- Rule 0: a session that built nothing still logs, outcome `no-build`, saying why in one line.
- Questions for the human: `ask_decision` (`gitmem decision ask`) with your recommendation. Never answer one: only
  the human does.
- A real mistake: `add_lesson` (`gitmem lesson add`); later evidence for one: `confirm_lesson`
  (`gitmem lesson confirm L-NNNN`).
- A ROADMAP item finished: `roadmap_done` (`gitmem roadmap done "item"`); the daily close plans the top open item
  until it is ticked.
- The past: `recall` (`gitmem recall "words"`), only when the task needs it.
- Never edit the memory files by hand. The tools write files only: commit them with your work, the LOG entry in
  the same commit as any lesson confirmation.
- `gitmem: command not found`: run it through the repository's launcher, from the top of the work tree:
  `sh {LAUNCHER} log add …` (it finds the repository's `.venv`, then PATH).
"""


def claude_cycle_command() -> str:
    """The template's `agent.command` for Claude Code: `claude -p` allowed to edit files and to run the memory
    commands, reporting usage and cost as JSON. A project's allow-list (.claude/settings.json) does not apply to
    `claude -p` in a workspace nobody has trusted interactively, such as a CI runner's checkout, so the command
    carries it."""
    allowed = ",".join(f"Bash({command}:*)" for command in AGENT_COMMANDS)
    return f'claude -p --output-format json --permission-mode acceptEdits --allowedTools "{allowed}"'
