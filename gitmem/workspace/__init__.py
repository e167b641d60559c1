"""One workspace of memory in a work tree: the handle every library entry point takes.

A `Workspace` is the repository root, the config that maps the memory files (for the chosen workspace of
`workspaces:`), and the repository itself, opened on first use. It also holds the two domain rules that
everything else shares: which cycle a memory write belongs to, and what the last entries of LOG are.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import gitio
from gitmem.config import Config, load_config
from gitmem.errors import GitmemError
from gitmem.records import record

if TYPE_CHECKING:      # the parsers load with the methods that use them: `gitmem check` often needs neither
    from gitmem.memory import log
    from gitmem.workspace.head_and_tail import FileSource

Clock = Callable[[], datetime]
CYCLE_ENV = "GITMEM_CYCLE"     # set by the runner for the agent it starts: the cycle being run
# Set by the runner for the agent it starts too: the cycle's workspace ("" for the top-level memory, so none the
# runner's own environment holds reaches the agent); the CLI's `--workspace` defaults to it (gitmem.cli.common).
WORKSPACE_ENV = "GITMEM_WORKSPACE"


class CycleEnvInvalid(GitmemError):
    """GITMEM_CYCLE is set to something that is no cycle number: a write would otherwise be numbered as if no
    cycle ran, silently, while whoever set it meant one."""


def runner_cycle() -> int | None:
    """The cycle the runner is running around this process (GITMEM_CYCLE), or None when it is unset or empty:
    then a write belongs to an interactive session (a human, or the human's own agent), numbered by
    `Workspace.cycle_for`. CycleEnvInvalid when it is set to anything but a cycle number."""
    given = os.environ.get(CYCLE_ENV, "").strip()
    if not given:
        return None
    # At most 18 ASCII digits, as every number in memory (no overflow downstream, no `²` that int() refuses).
    if given.isascii() and given.isdigit() and len(given) <= 18 and int(given) > 0:
        return int(given)
    shown = given if len(given) <= 40 else given[:40] + "…"
    raise CycleEnvInvalid(f"{CYCLE_ENV}={shown!r} is not a cycle number (a whole number from 1): the runner sets "
                          f"it for the cycle it runs; unset it to write as a session outside a cycle")


@record(frozen=True)
class Workspace:
    """A memory repository: its root, its config and the repository handle."""
    root: Path
    config: Config

    @classmethod
    def open(cls, path: str | Path | None = None, *, workspace: str | None = None) -> Workspace:
        """The repository around `path` (default: the current directory, or GIT_DIR / GIT_WORK_TREE)."""
        return cls.for_repo(gitio.open_repo(path), workspace=workspace)

    @classmethod
    def for_repo(cls, repo: gitio.Repo, config: Config | None = None, *, workspace: str | None = None) -> Workspace:
        """The work tree of an open repository, with `config` (default: its gitmem.yaml). A bare repository
        (a server's, a mirror) has history only: its root is the git directory, and only history is read."""
        root = gitio.work_tree(repo) or gitio.git_dir(repo)
        found = cls(root, config if config is not None else load_config(root, workspace=workspace))
        found.__dict__["repo"] = repo
        return found

    @classmethod
    def at(cls, root: str | Path, config: Config | None = None, *, workspace: str | None = None) -> Workspace:
        """The work tree at `root` with `config` (default: its gitmem.yaml); git is opened only when needed."""
        root = Path(root)
        return cls(root, config if config is not None else load_config(root, workspace=workspace))

    @cached_property
    def repo(self) -> gitio.Repo:
        return gitio.open_repo(self.root)

    @cached_property
    def state_dir(self) -> Path | None:
        """`.git/gitmem/`; None when the root is not a git work tree (then nothing is cached)."""
        if "repo" in self.__dict__:
            return gitio.state_dir(self.repo)
        return gitio.state_dir_of(self.root)

    @property
    def bare(self) -> bool:
        """Opened over a bare repository (`for_repo` on a server's or a mirror's): history only, no memory files.
        A workspace made `at` a folder has opened no git, and is never one."""
        return "repo" in self.__dict__ and gitio.work_tree(self.repo) is None

    @property
    def name(self) -> str:
        """The workspace's name from `workspaces:`, "" for the top-level memory."""
        return self.config.workspace

    def with_config(self, config: Config) -> Workspace:
        """The same repository judged by another config (a staged gitmem.yaml, an overridden model)."""
        other = replace(self, config=config)
        if "repo" in self.__dict__:
            other.__dict__["repo"] = self.repo
        return other

    def path(self, role: str) -> Path:
        return self.root / self.config.path(role)

    def read(self, role: str) -> str:
        """The file's text; "" when it is missing. Anything but a regular file inside the work tree is refused
        (`gitmem.confined.files.FileRefused`, exit 2)."""
        from gitmem.confined import files

        return files.read_text(self.root, self.config.path(role))

    def clock(self) -> Clock:
        """The real clock, in the configured time zone: every timestamp comes from it."""
        tz = self.config.tzinfo()
        return lambda: datetime.now(tz)

    # -- the last entries of LOG and the cycle a write belongs to --------------------------------------------

    def log_tail(self, count: int, *, numbered: bool = True) -> log.Tail:
        """The last `count` LOG entries, and at least the last cycle entry, read from the file's end."""
        from gitmem.workspace.head_and_tail import read_log_tail

        return read_log_tail(self.root, self.config.path("log"), count, state_dir=self.state_dir,
                             numbered=numbered)

    def log_source(self, *, numbered: bool = True) -> FileSource:
        """LOG on disk as it is now, for reading back from its end as far as a caller needs
        (`gitmem.memory.log.tail_entries`: the entries of a day, a streak): the cost follows the distance from
        the end, not the length of the history. What is appended later is not seen, as in a text read now."""
        from gitmem.workspace.head_and_tail import FileSource

        return FileSource(self.root, self.config.path("log"), self.state_dir, numbered=numbered)

    def last_log_cycle(self) -> int:
        """The number of the last cycle entry in LOG; 0 when there is none."""
        cycles = [e.cycle for e in self.log_tail(1, numbered=False).entries if e.cycle is not None]
        return max(cycles, default=0)

    def top_now_cycle(self) -> int:
        """The cycle of the top NOW block; 0 when there is none (or the top block is a plan)."""
        from gitmem.memory import now
        from gitmem.workspace.head_and_tail import read_head, second_heading

        top = now.parse(read_head(self.root, self.config.path("now"), second_heading), max_blocks=1).top
        return top.cycle if top is not None and top.cycle is not None else 0

    def cycle_for(self, role: str = "log", *, from_env: bool = True) -> int:
        """The cycle a new entry of `role` belongs to: "log" (a LOG entry), "now" (a NOW block), or "memory"
        (a lesson, a confirmation, a decision).

        During a cycle the runner says which one it is (GITMEM_CYCLE). Otherwise one rule numbers LOG and NOW
        alike (docs/format.md, "Cycle numbers"): the next cycle is LOG's last plus one, and a NOW block belongs
        to LOG's last cycle when NOW has no block for it yet, else to the next: an agent may write its NOW block
        before or after its LOG entry, and both belong to the same cycle. A second NOW block for a cycle LOG has
        not logged gets that same number (`MemoryWriter.add_now_block` refuses it). Other memory belongs to
        the open cycle, the one whose LOG entry is written but not committed yet, else to the next: so a session
        that logs first and confirms after files both under one cycle, as the runner's agent does.
        """
        if from_env and (given := runner_cycle()) is not None:
            return given
        last_log, top_now = self.last_log_cycle(), self.top_now_cycle()
        if role == "now":
            return last_log if top_now < last_log else last_log + 1
        if role == "memory" and top_now <= last_log and last_log and self.uncommitted_log_cycle(last_log):
            return last_log
        return last_log + 1

    def uncommitted_log_cycle(self, cycle: int) -> bool:
        """Whether LOG's entry for `cycle` is in the work tree but not in HEAD. LOG is append-only, so only
        what lies past HEAD's size is read."""
        if self.state_dir is None or gitio.file_current(self.repo, self.config.path("log")):
            return False
        head = gitio.head_id(self.repo)
        blob = gitio.file_id_at(self.repo, head, self.config.path("log")) if head is not None else None
        size = (gitio.blob_size(self.repo, blob) or 0) if blob is not None else 0
        from gitmem.confined import files
        from gitmem.memory import log
        from gitmem.workspace.head_and_tail import FileSource

        rel = self.config.path("log")
        handle = files.open_read(self.root, rel)
        if handle is None:
            return False
        with handle:
            handle.seek(size)
            added = handle.read()
        fenced = FileSource(self.root, rel, self.state_dir).fence_open_at(size)
        # Only headings outside fenced code are entries; the text before HEAD's end may leave a fence open.
        return any(number == cycle for _, number in log.heading_cycles(added, open_=fenced))
