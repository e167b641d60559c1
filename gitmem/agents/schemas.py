"""The tools' definitions as the Messages API and MCP's tools/list give them to a model: name, description and
input schema. Data only, with no import of the tools themselves, so `gitmem mcp` lists them at once."""
from __future__ import annotations

from typing import Any

from gitmem.memory.operations import MAX_TEXT, OPERATIONS, input_schema


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


# A text argument is bounded as the memory operations' are; file contents are the file tools' own (not bounded).
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
# The memory operations, rendered from their one table (gitmem.memory.operations), then recall.
MEMORY_TOOLS = (
    *({"name": operation.tool, "description": operation.description, "input_schema": input_schema(operation)}
      for operation in OPERATIONS),
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
