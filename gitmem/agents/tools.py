"""The tools an agent uses in one cycle, shared by the anthropic and scripted backends.

Every file tool goes through one confinement, the one gitmem's own files get (`gitmem.confined.files`): a path
relative to the root, without `..`, reached one component at a time without following any link, not even one
that points back inside the tree (the link is refused, and its target is there to be named instead), and only
regular files and plain directories are opened; nothing under `.git/`. Tools that walk a folder (list_files,
search_files) skip the links, FIFOs and devices they meet. The memory files and gitmem.yaml cannot be written
with file tools: memory goes through the memory tools, which call the validated writes in
`gitmem.memory_writer`, and which path is the config is decided once (`gitmem.agents.protected.is_config`).
Other protected paths (gitmem.agents.protected) can be written, and the result says what happens next: the
runner moves the change to a branch and asks the human. Every call returns a string; a failure is a tool error result,
never an exception, and each refused call is recorded in `notes` for the LOG entry's Evidence.
"""
from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from gitmem import gitio, secrets
from gitmem.agents import sandbox, tool_input
from gitmem.agents.ignored_tool_dirs import IGNORED_TOOL_DIRS, is_env_file
from gitmem.agents.protected import Protection, is_config
from gitmem.agents.schemas import FILE_TOOLS, MEMORY_TOOLS, SHELL_TOOL, tool_schemas
from gitmem.config import CONFIG_NAME, Config
from gitmem.confined import files
from gitmem.memory import operations
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Workspace, runner_cycle

MAX_OUTPUT = 20000          # characters of one tool result; long output is cut, with a note saying so
MAX_LIST = 500              # entries listed by list_files
MAX_HITS = 100              # lines returned by search_files


class ToolError(Exception):
    """A call the tool refuses or cannot do; becomes an error result."""


@dataclass(frozen=True)
class ToolOutcome:
    text: str
    is_error: bool = False
    noted: bool = False          # the failure is already in the toolbox's notes (for LOG Evidence)


@dataclass
class Toolbox:
    """One cycle's tools over the work tree of `workspace`."""

    workspace: Workspace
    cycle: int | None          # None: every write is numbered by the shared rule (Workspace.cycle_for)
    clock: Callable[[], Any] | None = None
    notes: list[str] = field(default_factory=list)
    written: dict[str, int] = field(default_factory=dict)   # memory writes made, by tool name
    interactive: bool = False  # an interactive session's tools (MCP): outside a runner cycle its LOG entry says so
    ran_command: bool = False  # whether run_command ran (its sandbox mode is noted once)

    def __post_init__(self) -> None:
        self.root = self.workspace.root.resolve()
        self.config = self.workspace.config
        self.memory = MemoryWriter(self.workspace, clock=self.clock, author_email=self.config.agent.email)
        # The five memory files and the config; ROADMAP stays editable so the agent can tick items off.
        self._memory = {PurePosixPath(rel).as_posix() for rel in self.config.memory_paths(optional=False).values()}
        self._guarded = Protection(self.config.agent.protected_paths)

    def schemas(self) -> list[dict[str, Any]]:
        return tool_schemas(shell=self.config.agent.shell.enabled)

    # -- dispatch ----------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolOutcome:
        handler = getattr(self, f"tool_{name}", None)
        if handler is None or (name == "run_command" and not self.config.agent.shell.enabled):
            return self._refuse(name, f"unknown tool {name!r}")
        schema = next(spec["input_schema"] for spec in (*FILE_TOOLS, *MEMORY_TOOLS, SHELL_TOOL)
                      if spec["name"] == name)
        problem = tool_input.schema_problem(schema, arguments)        # wrong types, nulls, unknown names, too long
        if problem is not None or not isinstance(arguments, dict):
            return self._refuse(name, f"bad arguments: {problem}")
        try:
            return ToolOutcome(_cut(handler(**tool_input.given(arguments))))
        except ToolError as err:
            return self._refuse(name, str(err))
        except WriteRefused as err:
            lines = [str(err), *(f"{v.path}:{v.line}: {v.code} {v.message}" for v in err.violations)]
            return self._refuse(name, "\n".join(lines))
        except TypeError as err:   # missing or unexpected arguments from the model
            return self._refuse(name, f"bad arguments: {err}")
        except OSError as err:
            return ToolOutcome(f"{name}: {err.strerror or err}", is_error=True)
        except Exception as err:   # a bug in one tool must not end the cycle: the model sees the error
            self.notes.append(f"{name} failed: {type(err).__name__}: {err}")
            return ToolOutcome(f"{name} failed: {type(err).__name__}: {err}", is_error=True, noted=True)

    def _refuse(self, name: str, message: str) -> ToolOutcome:
        self.notes.append(f"refused {name}: {message.splitlines()[0]}")
        return ToolOutcome(message, is_error=True, noted=True)

    # -- paths -------------------------------------------------------------------------------------
    def resolve(self, path: str, *, write: bool = False) -> str:
        """`path` as the repo-relative path the file tools use, or ToolError saying why not. Only the text is
        judged here (and, for a write, whether it is memory); every access goes through `gitmem.confined.files`,
        which refuses links, `.git` and anything but regular files and plain directories."""
        text = str(path or ".").strip()
        if not text or text.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", text):
            raise ToolError(f"{text!r}: use a path relative to the repository root")
        if ".." in PurePosixPath(text).parts:
            raise ToolError(f"{text!r}: `..` is not allowed; paths stay inside the repository")
        rel = PurePosixPath(text).as_posix()
        parts = [part.casefold() for part in PurePosixPath(rel).parts]
        if write and parts and (parts[0] in IGNORED_TOOL_DIRS or (len(parts) == 1 and is_env_file(parts[0]))):
            raise ToolError(f"{text!r} is where the human's own tools run code from (a git-ignored venv, direnv "
                            "layout or a .env file), outside any sandbox; the agent never writes it")
        if write and (kind := self._memory_kind(rel)) is not None:
            if kind == "config":
                raise ToolError(f"{text!r} steers gitmem and is not written with file tools; to change it, ask "
                                "the human with ask_decision")
            raise ToolError(f"{text!r} is a memory file: write it with the memory tools "
                            "(log_entry, now_block, ask_decision, add_lesson, confirm_lesson), not file tools")
        return rel

    def _memory_kind(self, rel: str) -> str | None:
        """"config" when `rel` is gitmem.yaml, "memory" when it is a memory file, else None; a link or a hard
        link to one, or another spelling a case-insensitive file system takes for it, counts as that file."""

        if is_config(rel):
            return "config"
        if rel in self._memory:
            return "memory"
        here = self.root / rel
        for kind, other in (("config", CONFIG_NAME), *(("memory", m) for m in sorted(self._memory))):
            try:
                if os.path.samefile(here, self.root / other):
                    return kind
            except OSError:
                continue
        return None

    @staticmethod
    def _refused(text: str, what: str) -> ToolError:
        """The refusal of what `gitmem.confined.files` refused (`is a symbolic link`)."""
        if "symbolic link" in what:
            return ToolError(f"{text!r} {what}: the file tools never follow a link; use the path it points to")
        return ToolError(f"{text!r} {what}")

    def _is_folder(self, text: str, rel: str) -> bool:
        """Whether `rel` is a plain directory (else a regular file); ToolError for a link or a special file."""
        found = files.mode(self.root, rel) if rel != "." else files.TREE
        if found in (files.TREE, files.GITLINK):
            return True
        if found is None:
            raise ToolError(f"{text}: no such file or directory")
        what = files.why_refused(self.root, rel)
        if what is not None:
            raise self._refused(text, what)
        return False

    def _read(self, text: str, rel: str) -> bytes:
        try:
            data = files.read_bytes(self.root, rel)
        except files.FileRefused as err:
            raise self._refused(text, err.what) from None
        if data is None:
            raise ToolError(f"{text}: no such file")
        return data

    def _walk(self, text: str, rel: str, *, recursive: bool = True) -> Iterator[tuple[str, bool]]:
        """(repo-relative path, is a folder) of what lies under `rel`, never through a link (gitmem.confined.files)."""
        try:
            yield from files.walk(self.root, rel, recursive=recursive)
        except files.FileRefused as err:
            raise self._refused(text, err.what) from None
        except FileNotFoundError:
            raise ToolError(f"{text}: not a directory") from None

    def _write(self, text: str, rel: str, data: bytes) -> None:
        try:
            files.write_bytes(self.root, rel, data)
        except files.FileRefused as err:
            raise self._refused(text, err.what) from None

    def _protected_note(self, rel: str) -> str:
        if not self._guarded.covers(rel):
            return ""
        return (f" ({rel} is a protected path: at the end of the cycle the runner moves this change to a branch "
                "and asks the human whether to apply it)")

    # -- file tools --------------------------------------------------------------------------------
    def tool_read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        rel = self.resolve(path)
        if rel == ".":
            raise ToolError(f"{path}: no such file")
        lines = _text(self._read(path, rel), rel).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        limit = self.config.limits.grep_over_lines
        if start_line is None and end_line is None and len(lines) > limit:
            raise ToolError(f"{path} has {len(lines)} lines (over {limit}): search it with search_files or "
                            f"recall, or read a range of at most {limit} lines with start_line/end_line")
        first = max(int(start_line or 1), 1)
        last = min(int(end_line or len(lines)), len(lines), first + limit - 1)
        if first > max(len(lines), 1):
            raise ToolError(f"{path} has only {len(lines)} lines")
        body = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(first, last + 1))
        return f"{rel}: lines {first}-{last} of {len(lines)}\n{body}"

    def tool_list_files(self, path: str = ".", recursive: bool = True) -> str:
        rel = self.resolve(path)
        if not self._is_folder(path, rel):
            raise ToolError(f"{path}: not a directory")
        found: list[str] = []
        for item, is_dir in self._walk(path, rel, recursive=recursive):
            if is_dir and recursive:        # a recursive listing names the files below a folder, not the folder
                continue
            found.append(item + ("/" if is_dir else ""))
            if len(found) > MAX_LIST:
                break
        extra = f"\n… more than {MAX_LIST} entries; list a subdirectory" if len(found) > MAX_LIST else ""
        return "\n".join(found[:MAX_LIST]) + extra if found else "(empty)"

    def tool_search_files(self, pattern: str, path: str = ".", glob: str | None = None) -> str:
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error:
            regex = re.compile(re.escape(pattern), re.IGNORECASE)
        rel = self.resolve(path)
        if rel != "." and files.mode(self.root, rel) is None:
            targets: list[str] = []         # nothing there: no match, as for an empty folder
        elif self._is_folder(path, rel):
            targets = [item for item, is_dir in self._walk(path, rel) if not is_dir]
        else:
            targets = [rel]
        hits: list[str] = []
        for file in targets:
            if glob and not (fnmatch(file, glob) or fnmatch(PurePosixPath(file).name, glob)):
                continue
            try:
                handle = files.open_read(self.root, file)      # never through a link, never a FIFO
                if handle is None:
                    continue
                with io.TextIOWrapper(handle, encoding="utf-8") as lines:
                    for number, line in enumerate(lines, 1):
                        if regex.search(line):
                            hits.append(f"{file}:{number}: {line.rstrip()[:300]}")
                            if len(hits) >= MAX_HITS:
                                return "\n".join(hits) + f"\n… stopped at {MAX_HITS} hits; narrow the search"
            except (UnicodeDecodeError, OSError, files.FileRefused):
                continue   # binary, unreadable or swapped files are not searched
        return "\n".join(hits) if hits else f"no match for {pattern!r}"

    def tool_write_file(self, path: str, content: str) -> str:
        rel = self.resolve(path, write=True)
        if rel == "." or files.mode(self.root, rel) in (files.TREE, files.GITLINK):
            raise ToolError(f"{path}: is a directory")
        self._write(path, rel, str(content).encode("utf-8"))
        return f"wrote {rel} ({len(str(content).splitlines())} lines){self._protected_note(rel)}"

    def tool_edit_file(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        rel = self.resolve(path, write=True)
        if rel == "." or self._is_folder(path, rel):
            raise ToolError(f"{path}: no such file")
        text = _text(self._read(path, rel), rel)
        count = text.count(old_text) if old_text else 0
        if count == 0:
            raise ToolError(f"{path}: old_text not found; read the file and copy the text exactly")
        if count > 1 and not replace_all:
            raise ToolError(f"{path}: old_text occurs {count} times; add context or set replace_all")
        self._write(path, rel, text.replace(old_text, new_text).encode("utf-8"))
        return f"edited {rel}: {count} replacement{'s' if count > 1 else ''}{self._protected_note(rel)}"

    def tool_run_command(self, command: str) -> str:
        shell = self.config.agent.shell
        argv = shlex.split(command)
        if not argv or not any(_allowed(command, argv, rule) for rule in shell.allow):
            raise ToolError(f"command not in agent.shell.allow: {command!r}")
        env = secrets.agent_environment(os.environ)
        if shutil.which(argv[0], path=env.get("PATH")) is None:
            raise ToolError(f"command not found: {argv[0]}")
        run_argv, env = self._sandboxed(argv, env)
        try:
            done = subprocess.run(run_argv, cwd=self.root, env=env, capture_output=True, text=True,
                                  timeout=shell.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ToolError(f"command timed out after {shell.timeout} s: {command!r}") from None
        except FileNotFoundError:
            raise ToolError(f"command not found: {argv[0]}") from None
        return f"exit {done.returncode}\n{done.stdout[-MAX_OUTPUT // 2:]}{done.stderr[-MAX_OUTPUT // 2:]}"

    def _sandboxed(self, argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """`argv` inside the sandbox agent.sandbox chooses (gitmem.agents.sandbox); its mode goes to the notes
        (LOG Evidence) with the first command."""
        try:
            box = sandbox.choose(self.config)
        except sandbox.SandboxUnavailable as err:
            raise ToolError(str(err)) from None
        if not self.ran_command:
            self.ran_command = True
            self.notes.append(f"run_command: {box.note}")
        # The agent wrote this command line: none of the files it names is bound (they could be anything).
        return box.wrap(argv, env, workspace=self.workspace, writable=self.config.agent.sandbox.writable,
                        agent_files=False)

    # -- memory tools ------------------------------------------------------------------------------
    def _once(self, name: str, what: str) -> None:
        if self.written.get(name):
            raise ToolError(f"this cycle already wrote its {what}; a cycle writes exactly one")
        self.written[name] = 1

    def tool_log_entry(self, task: str, outcome: str, result: str, tried: str | None = None,
                       evidence: str | None = None, learned: str | None = None, blocked: str | None = None) -> str:
        # One entry per cycle or session: the writer's rule (MemoryWriter._require_first_entry), for every writer.
        entry = self.memory.add_log_entry(task=task, outcome=outcome, result=result, tried=tried, evidence=evidence,
                                          learned=learned, blocked=blocked, cycle=self.cycle,
                                          interactive=self.interactive and runner_cycle() is None)
        self.written["log_entry"] = self.written.get("log_entry", 0) + 1
        return f"{self.config.path('log')}: appended {entry.heading()}"

    def tool_now_block(self, did: str, human: str, next: str) -> str:
        self._once("now_block", "NOW block")
        try:
            block = self.memory.add_now_block(did=did, human=human, next=next, cycle=self.cycle)
        except BaseException:
            self.written.pop("now_block")
            raise
        return f"{self.config.path('now')}: added {block.heading()}"

    def tool_ask_decision(self, title: str, recommendation: str, context: str | None = None,
                          options: str | None = None) -> str:
        item = self.memory.ask_decision(title=title, recommendation=recommendation, context=context,
                                        options=options, cycle=self.cycle)
        return f"{self.config.path('decisions')}: asked {item.id} · {item.title}"

    def tool_add_lesson(self, title: str, happened: str, why: str, change: str, rule: str | None = None,
                        supersedes: str | None = None) -> str:
        item = self.memory.add_lesson(title=title, happened=happened, why=why, change=change, rule=rule,
                                      supersedes=supersedes, cycle=self.cycle)
        return f"{self.config.path('lessons')}: added {item.id} · {item.title}"

    def tool_confirm_lesson(self, id: str, evidence: str) -> str:
        item = self.memory.confirm_lesson(id, evidence=evidence, cycle=self.cycle)
        return f"{self.config.path('lessons')}: confirmed {item.id} ({len(item.confirmations)} confirmations)"

    def tool_roadmap_done(self, item: str) -> str:
        found = self.memory.tick_roadmap(str(item))
        return f"{self.config.path('roadmap')}: ticked {found}"

    def tool_recall(self, query: str, limit: int | None = None) -> str:
        return recall_text(self.workspace, str(query), int(limit or self.config.recall.limit))


def recall_text(ws: Workspace, query: str, limit: int) -> str:
    """The shared recall engine (gitmem.recall); a plain text search of memory when its index cannot work."""
    from gitmem import recall
    from gitmem.recall.query import QueryRefused

    try:
        hits = recall.search(ws, query, limit=limit)
    except QueryRefused as err:     # the query's fault, not the index's: no fallback, the agent reads why
        raise ToolError(str(err)) from None
    except Exception as err:   # a broken index must not cost the agent its memory: fall back to text
        return (f"(recall index unavailable: {err}; plain text search)\n"
                + plain_recall(ws.root, ws.config, query, limit, sealed=_sealed_newest_first(ws)))
    return hits.text()


def _sealed_newest_first(ws: Workspace) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of LOG's sealed volumes that git holds, newest first (gitmem.workspace.log_history); none when
    git cannot say which they are."""
    from gitmem.workspace import log_history

    try:
        history = log_history.of(ws)
        for volume in reversed(history.volumes):
            yield volume.path, history.volume_bytes(volume)
    except gitio.RepoError:
        return


def plain_recall(root: Path, config: Config, query: str, limit: int, *,
                 sealed: Iterable[tuple[str, bytes]] = ()) -> str:
    """Lines of the memory files holding every word of `query` (case-insensitive), newest LOG lines first, then
    those of LOG's `sealed` volumes (newest first), read only while fewer than `limit` lines are found."""
    words = [w.lower() for w in re.findall(r"\w+", query)]
    if not words:
        return "no memory of that"

    def matching(rel: str, data: bytes) -> list[str]:
        lines = data.decode("utf-8", "replace").split("\n")
        # Masked as recall's hits are (gitmem.recall.search `_shown`): the whole line, before it is cut.
        return [f"{rel}:{n}: {secrets.scrub(line.strip())[:300]}" for n, line in enumerate(lines, 1)
                if all(w in line.lower() for w in words)]

    hits: list[str] = []
    for role, rel in config.memory_paths().items():
        try:
            data = files.read_bytes(root, rel)      # a memory file: never through a link, never a FIFO
        except (OSError, files.FileRefused):
            continue
        if data is None:
            continue
        found = matching(rel, data)
        hits.extend(reversed(found) if role in ("log", "lessons") else found)
        if role == "log":
            for path, volume in sealed:
                if len(hits) >= limit:
                    break
                hits.extend(reversed(matching(path, volume)))
    return "\n".join(hits[:limit]) if hits else "no memory of that"


def _allowed(command: str, argv: list[str], rule: str) -> bool:
    """A rule with glob characters matches the whole command; otherwise it is an argv prefix."""
    if any(ch in rule for ch in "*?["):
        return fnmatch(command.strip(), rule)
    prefix = shlex.split(rule)
    return bool(prefix) and argv[: len(prefix)] == prefix


def _text(data: bytes, rel: str) -> str:
    name = PurePosixPath(rel).name
    if b"\0" in data[:8192]:
        raise ToolError(f"{name}: binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{name}: not UTF-8 text") from None


def _cut(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n… cut at {MAX_OUTPUT} characters"


# The cycle prompt's two lists of the memory operations, rendered from their one table (gitmem.memory.operations).
MEMORY_TOOLS_TEXT = "\n".join([
    *operations.tool_lines(),
    "- recall: search the memory history",
    "The file tools (read_file, list_files, search_files, write_file, edit_file) refuse to write memory files."])

MEMORY_COMMANDS_TEXT = "\n".join([
    *operations.command_lines(),
    '- gitmem recall "words" (or grep -n on the memory files) to search the past',
    "Never edit the memory files by hand and never commit: the runner validates and commits."])


def memory_tools_text(backend: str) -> str:
    """How the prompt lists the memory operations: as tools, or as `gitmem` commands for a `command` agent."""
    return MEMORY_COMMANDS_TEXT if backend == "command" else MEMORY_TOOLS_TEXT
