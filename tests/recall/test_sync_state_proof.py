"""Recall's freshness check at C speed in a new process (issue 31): a whole-hashed file (DECISIONS, LESSONS,
RULES) checked once is proven again by two hashes (the file's bytes, the index's documents), not by parsing
its markdown; a forged index row changes the second hash, so it is checked whole again and never trusted."""
from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from gitmem.recall import corpus, search, sync_state_proof
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.recall_support import History

WHOLE = ("decisions", "lessons")      # RULES is parsed whole by design (hit_proof.py: it is capped)


@pytest.fixture
def history(memrepo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = History(memrepo)
    for _ in range(6):
        found.cycle()
    found.memory.add_lesson(title="Read the clock", happened="the report carried the wrong weekday",
                            why="the agent guessed the time", change="always read the clock")
    found.memory.ask_decision(title="Move the digest to Thursday", recommendation="Thursday mornings")
    found.commit("a lesson and a decision")
    return found


@contextmanager
def parsed_whole(root: Path) -> Iterator[list[str]]:
    """The roles whose whole file was parsed into documents (corpus.iter_docs), while the block runs; a hit's
    own span, read back by recall.hit_proof, is not the whole file."""
    roles: list[str] = []
    sizes = {role: len((root / f"{role.upper()}.md").read_text(encoding="utf-8")) for role in WHOLE}

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is corpus.iter_docs.__code__:
            role = frame.f_locals["role"]
            if role in sizes and len(frame.f_locals["text"]) >= sizes[role]:
                roles.append(role)

    sys.setprofile(watch)
    try:
        yield roles
    finally:
        sys.setprofile(None)


def new_process_search(history: History) -> list[str]:
    sync_state_proof._CHECKED.clear()             # what a new process starts with
    found = search(Workspace.at(history.root, history.config), "clock weekday", mode="bm25", min_score=0, gap=1)
    return [hit.id for hit in found]


def test_a_new_process_proves_an_unchanged_file_fresh_without_parsing_it(history: History) -> None:
    first = new_process_search(history)          # builds the index
    assert "L-0001" in first
    assert new_process_search(history) == first   # checks each file's state, keeps the proofs
    with parsed_whole(history.root) as roles:
        assert new_process_search(history) == first
    assert roles == []


def test_a_forged_index_row_is_checked_whole_again_and_not_trusted(history: History) -> None:
    new_process_search(history)
    new_process_search(history)
    path = history.config.path("lessons")
    conn = sqlite3.connect(str(history.root / ".git" / "gitmem" / "recall.sqlite"), isolation_level=None)
    try:
        conn.execute("UPDATE docs SET digest = ? WHERE path = ?", ("0" * 40, path))
        state = conn.execute("SELECT state FROM sources WHERE path = ?", (path,)).fetchone()[0]
        sync_state_proof._CHECKED.clear()
        with parsed_whole(history.root) as roles:
            assert not sync_state_proof.trusted(conn, history.root, "lessons", path, json.loads(state),
                                                ("a new process",))
        assert "lessons" in roles
    finally:
        conn.close()
    # The search after it reads LESSONS whole again and finds the lesson as before.
    assert "L-0001" in new_process_search(history)


def test_a_proofs_cache_nested_past_any_bound_proves_nothing_and_recall_answers(history: History) -> None:
    """The proofs cache is outside the box's reach but not an unboxed agent's (`~/.cache/gitmem`): nested
    100,000 levels deep, reading it raised RecursionError. Read as no proof at all, and recall answers."""
    where = sync_state_proof._proofs_file(history.root)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert sync_state_proof._proven(history.root) == {}
    assert new_process_search(history)
