"""Helpers for the cycle runner tests: an in-process backend that writes memory like a model would."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pygit2

from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.config import load_config
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import AGENT, DANA, GitRepo

Act = Callable[[MemoryWriter, CycleRequest], None]


class WritingBackend:
    """Runs `act` with the memory store a real backend's tools use, and reports token usage."""

    name = "test"

    def __init__(self, act: Act, *, usage: dict[str, int] | None = None, notes: list[str] | None = None) -> None:
        self.act = act
        self.usage = usage if usage is not None else {"input_tokens": 1200, "output_tokens": 300,
                                                      "cache_read_input_tokens": 900}
        self.notes = notes or []
        self.requests: list[CycleRequest] = []

    def run(self, request: CycleRequest) -> AgentResult:
        self.requests.append(request)
        memory = MemoryWriter(Workspace.at(request.root, request.config), clock=request.clock,
                              author_email=request.config.agent.email)
        self.act(memory, request)
        return AgentResult(turns=3, usage=dict(self.usage), notes=list(self.notes), stop_reason="end_turn")


def built(task: str = "write hello.txt", extra: dict[str, str] | None = None) -> Act:
    """An agent that does one task properly: a file, one LOG entry, one NOW block."""

    def act(memory: MemoryWriter, request: CycleRequest) -> None:
        for rel, text in (extra or {"hello.txt": f"hello from cycle {request.cycle}\n"}).items():
            (request.root / rel).write_text(text, encoding="utf-8")
        memory.add_log_entry(task=task, outcome="built", result="the file exists", evidence="cat hello.txt")
        memory.add_now_block(did=task, human="nothing", next="write more")

    return act


def config_of(repo: GitRepo):
    return load_config(repo.path)


def head_commit(repo: GitRepo) -> pygit2.Commit:
    return repo.repo.head.peel(pygit2.Commit)


def file_at(repo: pygit2.Repository, rev: str, rel: str) -> str | None:
    tree = repo.revparse_single(rev).peel(pygit2.Commit).tree
    try:
        return tree[rel].data.decode("utf-8")
    except KeyError:
        return None


def is_clean(repo: GitRepo) -> bool:
    return not {p: f for p, f in repo.repo.status(untracked_files="all", ignored=False).items()}


def agent_signature_ok(commit: pygit2.Commit) -> bool:
    return ((commit.author.name, commit.author.email) == AGENT
            and (commit.committer.name, commit.committer.email) == AGENT)


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(text, encoding="utf-8")


def origin_and_clone(tmp_path: Path, repo: GitRepo) -> Path:
    """A bare `origin` holding `repo`'s main, with main tracking origin/main in `repo`."""

    origin = tmp_path / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    repo.repo.remotes.create("origin", str(origin))
    git(repo.path, "push", "--quiet", "-u", "origin", "main")
    return origin


def clone(origin: Path, path: Path, who: tuple[str, str] = DANA) -> GitRepo:
    cloned = pygit2.clone_repository(str(origin), str(path))
    cloned.config["user.name"], cloned.config["user.email"] = who
    return GitRepo(path, cloned)


def pull(repo: GitRepo) -> None:
    git(repo.path, "pull", "--quiet", "--ff-only")
