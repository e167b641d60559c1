"""Helpers for the hostile-input suites: an agent that does whatever a test says, odd things planted where
gitmem expects a file, and the contract checks.

The contract every hostile case asserts: the right exit code, no traceback, one line naming the file, nothing
outside the tree touched, nothing of the human's lost, and (for checks) the right GM code.
"""
from __future__ import annotations

import hashlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from gitmem.agents.base import AgentResult, CycleRequest
from gitmem.confined import files
from gitmem.cycle.runner import CycleReport, Settings, run_cycle
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.helpers import CliResult, GitRepo, script_command, with_command_backend

GITMEM = Path(sys.executable).parent / "gitmem"
Act = Callable[[Path, MemoryWriter, CycleRequest], None]


class FixedClock:
    """A clock a test moves by hand."""

    def __init__(self, moment: datetime | None = None) -> None:
        self.moment = moment or datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.moment


class HostileBackend:
    """In-process: runs `act(root, memory, request)`, then (unless told not to) writes a proper LOG entry and
    NOW block, the way a well-behaved agent ends its cycle."""

    name = "hostile"

    def __init__(self, act: Act, *, finish: bool = True, fail: str | None = None) -> None:
        self.act, self.finish, self.fail = act, finish, fail

    def run(self, request: CycleRequest) -> AgentResult:
        from gitmem.agents.base import AgentError

        memory = MemoryWriter(Workspace.at(request.root, request.config), clock=request.clock,
                              author_email=request.config.agent.email)
        self.act(request.root, memory, request)
        if self.fail:
            raise AgentError(self.fail)
        if self.finish:
            memory.add_log_entry(task="hostile task", outcome="built", result="done", cycle=request.cycle)
            memory.add_now_block(did="hostile task", human="nothing", next="more", cycle=request.cycle)
        return AgentResult(turns=1, usage={}, stop_reason="end_turn")


def cycle(repo: GitRepo, act: Act, *, clock: FixedClock | None = None, finish: bool = True,
          fail: str | None = None) -> CycleReport:
    return run_cycle(repo.ws(), HostileBackend(act, finish=finish, fail=fail),
                     settings=Settings(clock=clock or FixedClock()))


def add_submodule(repo: GitRepo, tmp_path: Path) -> None:
    """A real submodule `lib/sub` committed in `repo` (its git directory in `.git/modules/lib/sub`)."""
    from tests.support.gitcli import git

    source = tmp_path / "sub-source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "code.txt").write_text("library code\n", encoding="utf-8")
    git(source, "add", "code.txt")
    git(source, "commit", "-q", "-m", "library")
    git(repo.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "lib/sub")
    git(repo.path, "commit", "-q", "-m", "a submodule")


def evidence(repo: GitRepo) -> str:
    """The last LOG entry's Evidence."""
    entries = log.parse(repo.read("LOG.md")).entries
    return entries[-1].get("Evidence") or ""


def command_agent(tmp_path: Path, repo: GitRepo, body: str, *, pass_env: tuple[str, ...] | None = (),
                  write_memory: bool = True, sandbox: str = "none") -> Path:
    """A Python agent script (outside the repo) run by the `command` backend: `body` runs with `root`, `os`,
    `subprocess` and `sys` at hand, then it writes its LOG entry and NOW block through the gitmem CLI."""
    script = tmp_path / f"hostile_agent_{abs(hash(body))}.py"
    finish = (f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 't', '--outcome', 'built', "
              f"'--result', 'r'], check=True, cwd=root)\n"
              f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', "
              f"'--next', 'n'], check=True, cwd=root)\n") if write_memory else ""
    script.write_text("import os, subprocess, sys\nsys.stdin.read()\nroot = os.environ['GITMEM_ROOT']\n"
                      + body + "\n" + finish, encoding="utf-8")
    text = with_command_backend(repo.read("gitmem.yaml"), script_command(script), sandbox=sandbox)
    if pass_env != ("ANTHROPIC_API_KEY",):      # None: no pass_env key at all (a config from before it existed)
        listing = "".join(f"    - {name}\n" for name in pass_env or ())
        block = "" if pass_env is None else f"  pass_env:\n{listing}" if listing else "  pass_env: []\n"
        text = text.replace("  pass_env:\n    - ANTHROPIC_API_KEY\n", block)
    repo.commit_files({"gitmem.yaml": text}, "use a command agent")
    return script


def no_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" not in text


def tree_files(path: Path) -> dict[str, bytes]:
    """Every regular file under `path` (for "nothing outside the tree was touched")."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# What can stand where a regular file belongs. "outside" links point at a copy of the file outside the tree.
KINDS = ("link-outside", "link-inside", "link-loop", "link-dangling", "directory", "fifo", "submodule")


def plant(root: Path, rel: str, kind: str, outside: Path) -> None:
    """Replace `root/rel` by `kind`; a link-outside points at `outside/<name>`, a copy of the file."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    original = target.read_bytes() if target.is_file() and not target.is_symlink() else b"# planted\n"
    if os.path.lexists(target):
        target.unlink()
    if kind == "link-outside":
        outside.mkdir(parents=True, exist_ok=True)
        (outside / target.name).write_bytes(original)
        target.symlink_to(outside / target.name)
    elif kind == "link-inside":
        (root / f"copy-of-{target.name}").write_bytes(original)
        target.symlink_to(f"copy-of-{target.name}")
    elif kind == "link-loop":
        target.symlink_to(target.name)
    elif kind == "link-dangling":
        target.symlink_to(outside / "nothing-here" / target.name)
    elif kind == "directory":
        target.mkdir()
        (target / "inside.md").write_bytes(original)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "submodule":
        nested = pygit2.init_repository(str(target), initial_head="main")
        (target / "README.md").write_text("a nested repository\n", encoding="utf-8")
        assert nested is not None
    else:
        raise ValueError(kind)


def fail_open(monkeypatch: pytest.MonkeyPatch, name: str, error: OSError) -> None:
    """Make the file layer's os.open raise `error` for `name` only: errors the suite cannot cause for real
    (it may run as root, who is never denied; EIO needs a failing disk)."""
    real_open = os.open

    def failing(path, flags, mode=0o777, *, dir_fd=None):
        if path == name:
            raise error
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(files.os, "open", failing)


def digest(path: Path) -> str:
    """A fingerprint of everything under `path` (names and bytes), to prove nothing outside the tree changed."""
    sha = hashlib.sha256()
    if not path.exists():
        return "absent"
    for item in sorted(path.rglob("*")):
        sha.update(str(item.relative_to(path)).encode())
        if item.is_file() and not item.is_symlink():
            sha.update(item.read_bytes())
    return sha.hexdigest()


def assert_clean_failure(result: CliResult, code: int, *names: str) -> None:
    """Exit `code`, no traceback anywhere, and (for exit 2) one stderr line naming every one of `names`."""
    both = result.out + result.err
    assert "Traceback" not in both, both
    assert result.code == code, both
    if code == 2:
        lines = [line for line in result.err.splitlines() if not line.startswith("gitmem: warning:")]
        assert len(lines) == 1 and lines[0].startswith("gitmem: "), result.err
        assert all(name in lines[0] for name in names), result.err


@contextmanager
def deadline(seconds: int = 30) -> Iterator[None]:
    """Fail instead of hanging forever (a FIFO opened for reading blocks until a writer comes). With pytest.fail,
    not TimeoutError: that is an OSError, which the code under test may catch as a file it could not read and go
    on, so a hang would pass as a slow success."""
    def expired(signum: int, frame: object) -> None:
        pytest.fail(f"still running after {seconds}s: something blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def picture(root: Path, *, skip: tuple[str, ...] = (".git/objects", ".git/gitmem", ".git/logs")) -> dict[str, bytes]:
    """Every regular file under `root` (relative path -> bytes), minus the parts git and gitmem rewrite freely."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(skip):
            found[rel] = path.read_bytes()
    return found


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}


def refused(result: CliResult, code: int) -> CliResult:
    """The command failed the documented way: exit `code`, a message, and no traceback anywhere."""
    assert result.code == code, f"exit {result.code}, not {code}:\n{result.out}{result.err}"
    assert "Traceback" not in result.out + result.err, result.err
    assert (result.out + result.err).strip(), "a refusal must say why"
    return result


def one_line_error(result: CliResult, code: int = 2) -> str:
    """A usage or config error: exit `code`, nothing on stdout, one `gitmem: …` line on stderr."""
    refused(result, code)
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert result.out == "" and len(lines) == 1 and lines[0].startswith("gitmem: "), result.err
    return lines[0]


def nest(top: Path, depth: int) -> Path:
    """`depth` folders under `top`, made one by one (Path.mkdir(parents=True) recurses too), and a file at the end."""
    path = str(top)
    os.makedirs(path, exist_ok=True)
    for _ in range(depth):
        path = os.path.join(path, "d")
        os.mkdir(path)
    with open(os.path.join(path, "f.txt"), "w", encoding="utf-8") as handle:
        handle.write("x")
    return Path(path)
