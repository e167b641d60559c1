"""The tools' definitions as the Messages API and MCP's tools/list give them to a model: name, description and
input schema. Data only, with no import of the tools themselves, so `gitmem mcp` lists them at once."""
from __future__ import annotations

from typing import Any

from gitmem.memory.log import OUTCOMES


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


# Characters of one text argument of a memory tool: far beyond what one memory field may hold, and low enough
# that no tool's cost on it is noticeable. File contents are the file tools' own (not bounded here).
MAX_TEXT = 50_000


def _s(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description, "maxLength": MAX_TEXT}


def _content(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _i(description: str) -> dict[str, str]:
    return {"type": "integer", "description": description}


FILE_TOOLS = (
    _tool("read_file", "Read a text file of the repository, with line numbers. Files over the line limit must be "
          "read by range or searched.", {"path": _s("path relative to the repository root"),
                                          "start_line": _i("first line, 1-based"), "end_line": _i("last line")},
          ["path"]),
    _tool("list_files", "List files under a directory of the repository.",
          {"path": _s("directory, default the root"), "recursive": {"type": "boolean"}}, []),
    _tool("search_files", "Search files for a regular expression (case-insensitive); returns path:line: text.",
          {"pattern": _s("regular expression or plain text"), "path": _s("file or directory, default the root"),
           "glob": _s("only files matching this glob, e.g. *.py")}, ["pattern"]),
    _tool("write_file", "Create or overwrite a file (not the memory files: use the memory tools).",
          {"path": _s("path relative to the repository root"), "content": _content("the whole new content")},
          ["path", "content"]),
    _tool("edit_file", "Replace exact text in a file (not the memory files).",
          {"path": _s("path"), "old_text": _content("text to replace, exactly as in the file"),
           "new_text": _content("replacement"), "replace_all": {"type": "boolean"}}, ["path", "old_text", "new_text"]),
)
MEMORY_TOOLS = (
    _tool("log_entry", "Append this cycle's one LOG entry. The timestamp and cycle number are written for you.",
          {"task": _s("the one task of this cycle"),
           "outcome": {"type": "string", "enum": list(OUTCOMES)},
           "result": _s("what came of it; for no-build, one line saying why (Rule 0)"),
           "tried": _s("what was tried"), "evidence": _s("commands, numbers, links"),
           "learned": _s("what was learned"),
           "blocked": _s("the pending decision(s) the task is blocked on, e.g. D-0002")},
          ["task", "outcome", "result"]),
    _tool("now_block", "Put this cycle's one NOW block on top: what was done, what the human needs, what is next.",
          {"did": _s("what was done"), "human": _s("what the human needs to know or do ('nothing' is fine)"),
           "next": _s("what comes next")}, ["did", "human", "next"]),
    _tool("ask_decision", "Ask the human a decision in DECISIONS Pending, with your recommendation.",
          {"title": _s("the question"), "recommendation": _s("what you recommend and why"),
           "context": _s("what the human needs to know"), "options": _s("the options")},
          ["title", "recommendation"]),
    _tool("add_lesson", "Record a real mistake in LESSONS: what happened, why, what must change.",
          {"title": _s("short title"), "happened": _s("what went wrong"), "why": _s("why"),
           "change": _s("what must change"), "rule": _s("the one-line rule it would become"),
           "supersedes": _s("R-NN of a rule it replaces")}, ["title", "happened", "why", "change"]),
    _tool("confirm_lesson", "Confirm a lesson (L-NNNN) with this cycle's evidence.",
          {"id": _s("L-NNNN"), "evidence": _s("the result that confirms it")}, ["id", "evidence"]),
    _tool("roadmap_done", "Tick off the ROADMAP item this cycle finished (the daily close plans the top open item "
          "until it is ticked).", {"item": _s("the item's text, or a part of it only that item holds")}, ["item"]),
    _tool("recall", "Search the whole memory history (LOG, lessons, decisions, NOW, rules). Only when the task "
          "needs the past; at most 2 queries. The best evidence comes first; hits marked weak do not hold most of the "
          "question. If nothing relevant comes back, say 'no memory of that' and go on.",
          {"query": _s("words to search for"),
           "limit": {**_i("how many hits, default from config"), "minimum": 1, "maximum": 100}}, ["query"]),
)
SHELL_TOOL = _tool("run_command", "Run an allowed command (agent.shell.allow) in the repository root, no shell.",
                   {"command": _s("the command line")}, ["command"])


def tool_schemas(*, shell: bool = False) -> list[dict[str, Any]]:
    """Fresh copies of the tool definitions, so a caller may add cache_control to the last one."""
    import copy

    return copy.deepcopy([*FILE_TOOLS, *MEMORY_TOOLS, *((SHELL_TOOL,) if shell else ())])


# -- the same operations, as the cycle prompt teaches them ---------------------------------------------------
