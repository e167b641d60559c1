"""Shared test helpers: real pygit2 repositories seeded from the template, and the CLI run in-process.

Tests never mock git: every helper here works on a real repository in a temp dir.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from gitmem.config import Config
from gitmem.gitio import Repo
from gitmem.scaffold.init import template_dir, template_files
from gitmem.workspace import Workspace

HUMAN = ("Ada Human", "ada@example.com")
DANA = ("Dana Human", "dana@example.com")            # a second human, in a second clone
AGENT = ("gitmem-agent", "agent@gitmem.invalid")      # the template's agent identity (gitmem.yaml)


@contextlib.contextmanager
def as_the_human() -> Iterator[None]:
    """What the human does from their own process while an in-process agent runs: the runner has put
    GITMEM_CYCLE in this process's environment, and `gitmem decision answer` refuses inside a cycle. The
    human's shell never has it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("GITMEM_CYCLE", raising=False)
        yield


@dataclass
class GitRepo:
    """A real repository in a temp dir, with small helpers to write, stage and commit."""

    path: Path
    repo: pygit2.Repository

    def write(self, rel: str, content: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8", newline="")
        else:
            target.write_bytes(content)
        return target

    def read(self, rel: str) -> str:
        return (self.path / rel).read_text(encoding="utf-8")

    def append(self, rel: str, text: str) -> Path:
        return self.write(rel, self.read(rel) + text)

    def delete(self, rel: str) -> None:
        (self.path / rel).unlink()

    def stage(self, *paths: str, index_path: Path | None = None) -> None:
        """`git add` (or `git rm` for a deleted file) into .git/index, or into another index file."""
        index = pygit2.Index(str(index_path)) if index_path is not None else self.repo.index
        if index_path is None:
            index.read()
        for rel in paths:
            if (self.path / rel).exists():
                if index_path is None:
                    index.add(rel)
                else:
                    blob = self.repo.create_blob((self.path / rel).read_bytes())
                    index.add(pygit2.IndexEntry(rel, blob, pygit2.enums.FileMode.BLOB))
            elif rel in index:
                index.remove(rel)
        index.write()

    def commit(self, message: str, *, author: tuple[str, str] = HUMAN) -> pygit2.Oid:
        """Commit the index on HEAD, authored and committed by `author`."""
        index = self.repo.index
        index.read()
        tree = index.write_tree()
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        # Dated by the real clock, as git dates a commit, and a minute after its parent so that history reads in
        # order: a commit is never older than the answers it holds (GM211), whether a fixture's clock or the
        # real one wrote them.
        when = int(time.time())
        if parents:
            when = max(when, self.repo[parents[0]].commit_time + 60)
        signature = pygit2.Signature(author[0], author[1], when, 0)
        return self.repo.create_commit("HEAD", signature, signature, message, tree, parents)

    def amend(self, *paths: str) -> pygit2.Oid:
        """Stage `paths` and fold them into the HEAD commit, keeping its author, message and parents."""
        self.stage(*paths)
        index = self.repo.index
        index.read()
        head = self.repo.head.peel(pygit2.Commit)
        return self.repo.amend_commit(head, "HEAD", tree=index.write_tree())

    def stage_files(self, files: dict[str, str | bytes | None]) -> None:
        """Write (None deletes) and stage, as `git add -A` of those paths would."""
        for rel, content in files.items():
            if content is None:
                self.delete(rel)
            else:
                self.write(rel, content)
        self.stage(*files)

    def commit_files(self, files: dict[str, str | bytes | None], message: str = "change", *,
                     author: tuple[str, str] = HUMAN) -> pygit2.Oid:
        """Write (None deletes), stage and commit in one go."""
        self.stage_files(files)
        return self.commit(message, author=author)

    def head(self) -> str:
        return str(self.repo.head.target)

    @property
    def handle(self) -> Repo:
        """The same repository as gitmem's git layer takes it."""
        return Repo(self.repo)

    def ws(self, config: Config | None = None) -> Workspace:
        """The repository as gitmem's library takes it, with `config` (default: its gitmem.yaml)."""
        return Workspace.at(self.path, config)


# RULES.md's `Who I am`, filled in as a new user does first: a cycle refuses to start on the template's
# placeholders (GM717).
WHO_I_AM = {"<agent name>": "Scout", "<one sentence: what this agent exists to do>": "keep the example shipping",
            "<who answers DECISIONS.md, and how to reach them>": f"{HUMAN[0]} <{HUMAN[1]}>, in DECISIONS.md"}


def filled_rules(text: str) -> str:
    for placeholder, value in WHO_I_AM.items():
        text = text.replace(placeholder, value)
    return text


def fill_in_rules(root: Path) -> None:
    """Fill in `Who I am` in every RULES.md under `root` that `gitmem init` wrote (a workspace's too)."""
    for path in root.rglob("RULES.md"):
        if ".git" not in path.relative_to(root).parts:
            path.write_text(filled_rules(path.read_text(encoding="utf-8")), encoding="utf-8")


def make_repo(path: Path, *, template: bool = True, commit: bool = True,
              author: tuple[str, str] = HUMAN, filled: bool = True) -> GitRepo:
    """`git init` in `path`, copy template-repo/ in (with RULES.md's `Who I am` filled in unless not `filled`),
    and (by default) commit it as a human."""
    path.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(path), initial_head="main")
    repo.config["user.name"] = author[0]
    repo.config["user.email"] = author[1]
    git = GitRepo(path, repo)
    if template:
        base = template_dir()
        # The template's .gitattributes names the merge driver, which only `gitmem init` registers: a test repo
        # made without init would carry GM925 into every check's output. Tests of the driver register it.
        names = [rel for rel in template_files() if rel != ".gitattributes"]
        for rel in names:
            data = (base / rel).read_bytes()
            git.write(rel, filled_rules(data.decode("utf-8")) if rel == "RULES.md" and filled else data)
        git.stage(*names)
        if commit:
            git.commit("start from the gitmem template", author=author)
    return git


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def declined_proposal_repo(path: Path, branch: str) -> GitRepo:
    """An agent's repository (`make_repo`) whose question about the change on `branch` a human answered No; the
    branch itself is the caller's to make."""
    from gitmem.memory_writer import MemoryWriter
    from tests.support.gitcli import git

    agent = make_repo(path)
    asked = MemoryWriter(Workspace.at(agent.path)).ask_decision(
        title="Apply the change?", recommendation="no", context=f"The change is on branch {branch}.")
    git(agent.path, "commit", "-qam", "ask", who=AGENT)
    MemoryWriter(Workspace.at(agent.path)).answer_decision(asked.id, answer="No", name=HUMAN[0], email=HUMAN[1])
    git(agent.path, "commit", "-qam", "answer", who=HUMAN)
    return agent


def run_cli(argv: Sequence[str], *, cwd: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str], stdin: str | None = None) -> CliResult:
    """Run `gitmem ARGV` in-process from `cwd` and capture its exit code, stdout and stderr. Every run is held
    to the exit codes its command's --help lists: an undocumented exit fails the test that meets it."""
    from gitmem.cli import main
    from tests.support.exit_codes import command_for, declared

    monkeypatch.chdir(cwd)
    # A text layer over bytes, as a real stdin is: a command may read the bytes (`sys.stdin.buffer`).
    given = (stdin if stdin is not None else "").encode("utf-8", "surrogatepass")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(given), encoding="utf-8", errors="surrogatepass"))
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    listed = declared(command_for(argv))
    assert code in listed, (f"`gitmem {' '.join(argv)}` exited {code}, which its --help does not list "
                            f"({sorted(listed)}):\n{captured.out}{captured.err}")
    return CliResult(code, captured.out, captured.err)


def isolate_git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a surrounding hook's or CI's git environment out of the test (tests set what they need)."""
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                 "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF",
                 "PRE_COMMIT_LOCAL_BRANCH", "GITMEM_CYCLE"):
        monkeypatch.delenv(name, raising=False)


def many_commits(repo: GitRepo, count: int) -> None:
    """`count` commits that touch a plain file only, made directly (fast)."""
    raw: pygit2.Repository = repo.repo
    parent = raw.head.target
    tree = raw.head.peel(pygit2.Commit).tree
    signature = pygit2.Signature("Ada Human", "ada@example.com", 1_764_489_600, 0)
    for n in range(count):
        builder = raw.TreeBuilder(tree)
        builder.insert("counter.txt", raw.create_blob(f"{n}\n".encode()), pygit2.enums.FileMode.BLOB)
        tree = raw[builder.write()]
        parent = raw.create_commit(None, signature, signature, f"count {n}", tree.id, [parent])
    raw.references["refs/heads/main"].set_target(parent)


def script_command(script: Path, *args: str) -> str:
    """The shell command that runs a Python agent script with this interpreter."""
    return " ".join(shlex.quote(part) for part in (sys.executable, str(script), *args))


def with_command_backend(config_text: str, command: str, *, sandbox: str = "none") -> str:
    """The template's gitmem.yaml text with the `command` backend chosen and `agent.command` set to `command`.
    Without the sandbox by default: the suites of the mechanisms that hold without it (masking, the guard, the
    reaper) must prove them on a plain process; tests/agents/test_sandbox*.py choose `auto` or `bubblewrap`."""
    text = re.sub(r"(?m)^  #? ?command: .*$", lambda _: f"  command: {json.dumps(command)}", config_text)
    text = re.sub(r"(?m)^    mode: auto$", f"    mode: {sandbox}", text)
    return text.replace("  # backend: anthropic", "  backend: command")


def fleet_home(patch: pytest.MonkeyPatch, factory: pytest.TempPathFactory, name: str) -> Path:
    """A module's folder for a fleet of agents: git's environment isolated, and gitmem's cache (the fleet's
    read-only copies) and state under it, not the user's."""
    isolate_git_env(patch)
    root = factory.mktemp(name)
    patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
    patch.setenv("XDG_STATE_HOME", str(root / "state"))
    return root


def counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[tuple[object, ...]]:
    """The arguments of every call of `module.name` from here on (the function itself still runs): what a
    test of cost counts instead of timing."""
    calls: list[tuple[object, ...]] = []
    real = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@dataclass
class BodiesRead:
    """Every read of an entry's fields from here on, however a reader reaches them (`parse_fields`, `fields_keyed`
    for one key, `first_field_value` for one value): (id of the body, its first line when the reader is told it,
    the key or "*" for all)."""

    reads: list[tuple[int, int | None, str]]

    def clear(self) -> None:
        self.reads.clear()

    def bodies(self) -> int:
        """How many bodies were read, their fields parsed once at most (a second parse of the same fields fails;
        one value looked up again is a scan of a few lines, not a parse)."""
        parsed = [read for read in self.reads if read[1] is not None]
        assert len(set(parsed)) == len(parsed), f"fields parsed twice: {sorted(parsed)}"
        return len({body for body, _, _ in self.reads})


def bodies_read(monkeypatch: pytest.MonkeyPatch, modules: Sequence[object] = ()) -> BodiesRead:
    """`BodiesRead` by the readers in `modules` (by default the memory parsers': fields, decisions and lessons)."""
    from gitmem.memory import decisions, fields, lessons

    found = BodiesRead([])
    whole, keyed, first = fields.parse_fields, fields.fields_keyed, fields.first_field_value

    def counted(body: tuple[str, ...] | list[str], first_line: int) -> tuple[fields.Field, ...]:
        found.reads.append((id(body), first_line, "*"))
        return whole(body, first_line)

    def counted_keyed(body: tuple[str, ...] | list[str], first_line: int, key: str) -> tuple[fields.Field, ...]:
        found.reads.append((id(body), first_line, key))
        return keyed(body, first_line, key)

    def counted_first(body: tuple[str, ...] | list[str], key: str) -> str | None:
        found.reads.append((id(body), None, key))
        return first(body, key)

    for module in modules or (fields, decisions, lessons):
        for name, replacement in (("parse_fields", counted), ("fields_keyed", counted_keyed),
                                  ("first_field_value", counted_first)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, replacement)
    return found
