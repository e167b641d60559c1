"""Deriving blobs from a newer copy never changes what a check sees: same bytes, or a plain read."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
import pytest

from gitmem import gitio
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.check_and_verify import check_staged, check_worktree, verify_range
from gitmem.config import Config
from gitmem.gitio import blobproof as snapread
from gitmem.gitio.blobproof import blob_id, derive, derived
from gitmem.gitio.snapshots import Snapshot
from gitmem.workspace import Workspace
from tests.support.synth import build_synthetic_repo

PATHS = list(Config().memory_paths().values())


def test_blob_id_is_gits() -> None:
    assert blob_id(b"hello\n") == str(pygit2.hash(b"hello\n"))
    assert blob_id(b"hel", memoryview(b"lo\n")) == str(pygit2.hash(b"hello\n"))


def test_derive_a_prefix_and_a_removed_span() -> None:
    newer = b"# NOW\n\n## b2\n- Did: two\n\n## b1\n- Did: one\n"
    older_now = b"# NOW\n\n## b1\n- Did: one\n"
    older_log = newer[:20]
    assert derive(blob_id(older_now), len(older_now), newer) == older_now
    assert derive(blob_id(older_log), len(older_log), newer) == older_log
    assert derive(blob_id(newer), len(newer), newer) == newer
    other = b"# NOW\n\n## b1\n- Did: 0ne\n"
    assert derive(blob_id(other), len(other), newer) is None
    assert derive(blob_id(newer + b"x"), len(newer) + 1, newer) is None
    # A prefix whose top-removed twin would also end where a block begins: that one is hashed first, and fails.
    blocks = b"# L\n## a\n## b\n## c\n"
    assert derive(blob_id(blocks[:14]), 14, blocks) == blocks[:14] == b"# L\n## a\n## b\n"


def test_derived_snapshot_falls_back_to_the_real_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapread, "MIN_SIZE", 0)
    real = {"LOG.md": b"# LOG\n\n## a\n", "NOW.md": b"# NOW\n"}
    oids = {p: blob_id(d) for p, d in real.items()}
    reads: list[str] = []

    def load(path: str) -> bytes | None:
        reads.append(path)
        return real.get(path)

    base = Snapshot("commit", load, oids)
    newer = {"LOG.md": real["LOG.md"] + b"- Task: x\n", "NOW.md": b"# NOW changed\n"}
    snap = derived(base, list(real), newer.get, lambda oid: len(next(d for d in real.values() if blob_id(d) == oid)))
    assert snap.read("LOG.md") == real["LOG.md"] and reads == []          # derived, not read
    assert snap.read("NOW.md") == real["NOW.md"] and reads == ["NOW.md"]  # no candidate: read
    assert snap.oid("LOG.md") == oids["LOG.md"]


# After the synthetic history (it ends on 2026-11-01) and before the clock: rules 4 refuse an entry dated ahead
# of the clock that judges it (GM309), which the plain reads below do not judge.
_YESTERDAY = f"{datetime.now(UTC) - timedelta(days=1):%Y-%m-%d %H:%M} UTC"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(build_synthetic_repo(tmp_path_factory.mktemp("snapread") / "repo", scale=0.05, seed=5).path)


def _plain_range(repo: pygit2.Repository, count: int) -> list:
    """What verify_range found before derivation existed: every commit against its parent, plain reads."""
    found = []
    commit = repo.head.peel(pygit2.Commit)
    for _ in range(count):
        parent = commit.parents[0]
        found += run_checks(CheckInput(Config(), gitio.commit_snapshot(gitio.Repo(repo), str(parent.id), PATHS),
                                       gitio.commit_snapshot(gitio.Repo(repo), str(commit.id), PATHS),
                                       commit.author.email))
        commit = parent
    return sorted(found)


def test_checks_see_the_same_with_and_without_derivation(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapread, "MIN_SIZE", 0)
    repo = pygit2.Repository(str(history))
    log_path = history / "LOG.md"
    original = log_path.read_bytes()
    handle, ws = gitio.Repo(repo), Workspace.at(history, Config())
    head = str(repo.head.target)
    plain = lambda: run_checks(CheckInput(Config(), gitio.commit_snapshot(handle, head, PATHS),  # noqa: E731
                                          gitio.index_snapshot(handle, PATHS), Config().agent.email))
    try:
        # A clean append, a rewrite in the middle (GM301), and an edit the work tree does not share.
        entry = f"\n## {_YESTERDAY} · cycle 999 · built\n- Task: t\n- Result: r\n".encode()
        for content in (original + entry, original.replace(b"cycle 3 ", b"cycle 33 ", 1)):
            log_path.write_bytes(content)
            index = repo.index
            index.add("LOG.md")
            index.write()
            expected = plain()
            assert check_staged(ws) == expected
            assert check_worktree(ws) == run_checks(CheckInput(
                Config(), gitio.commit_snapshot(handle, head, PATHS), gitio.worktree_snapshot(history),
                Config().agent.email))
            log_path.write_bytes(content + b"unstaged tail\n")
            assert check_staged(ws) == expected
        assert any(v.code == "GM301" for v in expected)
    finally:
        log_path.write_bytes(original)
        index = repo.index
        index.add("LOG.md")
        index.write()
    result = verify_range(ws, "HEAD~12", "HEAD")
    assert result.violations == _plain_range(repo, 12) == []


def test_verify_reports_a_rewrite_like_before(history: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(snapread, "MIN_SIZE", 0)
    repo = pygit2.Repository(str(history))
    head = repo.head.peel(pygit2.Commit)
    log_bytes = head.tree["LOG.md"].data
    bad = log_bytes.replace(b"- Task:", b"- Task: (edited)", 1)
    identity = gitio.Identity("gitmem-agent", Config().agent.email)
    gitio.commit_files(gitio.Repo(repo), {"LOG.md": bad}, "rewrite history", author=identity)
    gitio.commit_files(gitio.Repo(repo), {"LOG.md": bad + f"\n## {_YESTERDAY} · close\n- Cycles: 0\n".encode()},
                       "append", author=identity)
    try:
        result = verify_range(Workspace.at(history, Config()), "HEAD~5", "HEAD")
        assert [v.code for v in result.violations] == ["GM301"]
        plain = _plain_range(repo, 5)
        assert [(v.path, v.line, v.code) for v in result.violations] == [(v.path, v.line, v.code) for v in plain]
    finally:
        repo.reset(head.id, pygit2.enums.ResetMode.HARD)


def test_a_now_with_a_block_on_top_is_hashed_once_for_its_proof(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD's NOW is the staged one with a block removed: one hash proves it. The check both proves its prefix (no
    prefix: NOW grows at the top) and reads it, and each candidate used to be hashed on each way in."""
    monkeypatch.setattr(snapread, "MIN_SIZE", 0)
    repo = pygit2.Repository(str(history))
    now_path = history / "NOW.md"
    original = now_path.read_bytes()
    first = original.find(b"\n## ") + 1
    block = original[first:original.find(b"\n## ", first) + 1]
    handle, ws = gitio.Repo(repo), Workspace.at(history, Config())
    head = str(repo.head.target)
    hashed: list[int] = []
    real_blob_id = snapread.blob_id

    def counted(*parts: bytes | memoryview) -> str:
        if bytes(parts[0][:5]) == b"# NOW":
            hashed.append(sum(len(part) for part in parts))
        return real_blob_id(*parts)

    try:
        now_path.write_bytes(original[:first] + block + original[first:])
        index = repo.index
        index.add("NOW.md")
        index.write()
        plain = run_checks(CheckInput(Config(), gitio.commit_snapshot(handle, head, PATHS),
                                      gitio.index_snapshot(handle, PATHS), Config().agent.email))
        monkeypatch.setattr(snapread, "blob_id", counted)
        assert check_staged(ws) == plain
    finally:
        now_path.write_bytes(original)
        index = repo.index
        index.add("NOW.md")
        index.write()
    assert hashed == [len(original)]
