"""Recall over LOG's sealed volumes (rules 6, issue 31): every volume HEAD holds is indexed once, under its own
path and lines, and ranks as the same entries did in LOG.md; nothing git does not hold is ever a hit."""
from __future__ import annotations

import os
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from gitmem import recall
from gitmem.agents.tools import recall_text
from gitmem.memory import log
from gitmem.recall import sync_state_proof
from gitmem.workspace import Workspace, log_history
from tests.support.helpers import GitRepo
from tests.support.recall_support import History
from tests.support.sealing import seal

VOLUME = "history/LOG-0001.md"


@pytest.fixture
def history(memrepo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = History(memrepo)
    for n in range(10):
        found.cycle(task={1: "feed the quokka colony at dawn", 5: "mend the kiwi fence"}.get(n))
    return found


def hits(history: History, query: str, **options: object) -> list[recall.Hit]:
    sync_state_proof._CHECKED.clear()            # what a new process starts with
    return list(recall.search(Workspace.at(history.root, history.config), query, mode="bm25", min_score=0, gap=1,
                       kinds=["log"], **options))


def ranked(history: History, query: str) -> list[tuple[str, str]]:
    return [(hit.kind, hit.id) for hit in hits(history, query, limit=50)]


def test_an_entry_sealed_in_a_volume_is_found_at_its_path_and_line(history: History) -> None:
    before = hits(history, "quokka colony")
    assert [(h.path, h.id) for h in before] == [("LOG.md", "cycle 2")]
    assert seal(history.repo, per_volume=4, seal_at=8)
    found = hits(history, "quokka colony")
    assert [(h.path, h.id) for h in found] == [(VOLUME, "cycle 2")]
    lines = (history.root / VOLUME).read_text(encoding="utf-8").splitlines()
    assert lines[found[0].line - 1].endswith("· cycle 2 · built")
    assert str(found[0]).startswith(f"{VOLUME}:{found[0].line} [log cycle 2 ")
    # The agent's recall tool (and the MCP server's, which is the same Toolbox) goes through the same engine.
    shown = recall_text(Workspace.at(history.root, history.config), "quokka colony", 5)
    assert f"{VOLUME}:{found[0].line} [log cycle 2 " in shown


def test_the_agents_text_search_without_an_index_reads_the_volumes_too(history: History) -> None:
    seal(history.repo, per_volume=4, seal_at=8)
    (history.root / ".git" / "gitmem" / "recall.sqlite").mkdir(parents=True)      # no index can be written
    shown = recall_text(Workspace.at(history.root, history.config), "quokka colony", 5)
    assert shown.startswith("(recall index unavailable")
    lines = (history.root / VOLUME).read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "quokka colony" in text)
    assert f"{VOLUME}:{line}: - Task: feed the quokka colony at dawn" in shown


def test_a_sealed_history_ranks_the_same_entries_as_the_unsealed_one(history: History) -> None:
    query = "invoice refund pipeline"
    unsealed = ranked(history, query)
    assert len(unsealed) > 3
    assert seal(history.repo, per_volume=4, seal_at=8)
    assert ranked(history, query) == unsealed                 # the index kept in step
    recall.rebuild(Workspace.at(history.root, history.config))
    assert ranked(history, query) == unsealed                 # and built afresh


def test_the_entry_after_a_volumes_last_borrows_from_it_as_unsealed(memrepo: GitRepo, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    history = History(memrepo)
    history.step = timedelta(minutes=30)                  # one day's cycles: an entry lends to the one after it
    for n in range(10):
        history.cycle(task="calibrate the heron telescope" if n == 3 else None)
    unsealed = ranked(history, "heron telescope")
    assert unsealed[:2] == [("log", "cycle 4"), ("log", "cycle 5")]       # cycle 5 borrows from cycle 4
    assert seal(history.repo, per_volume=4, seal_at=8)                    # cycle 4 ends volume 1, 5 opens LOG.md
    assert ranked(history, "heron telescope") == unsealed


def test_a_sync_after_a_seal_parses_only_the_new_volume(history: History, monkeypatch: pytest.MonkeyPatch) -> None:
    seal(history.repo, per_volume=4, seal_at=8)
    hits(history, "quokka")
    parsed: list[str] = []
    real = log_history.LogHistory.volume_entries

    def counting(self: log_history.LogHistory, volume: log_history.Volume) -> tuple[log.LogEntry, ...]:
        parsed.append(volume.path)
        return real(self, volume)

    monkeypatch.setattr(log_history.LogHistory, "volume_entries", counting)
    for _ in range(4):
        history.cycle()
    assert [h.path for h in hits(history, "kiwi fence")] == ["LOG.md"]
    assert parsed == []                                       # nothing new sealed: no volume read again
    assert seal(history.repo, per_volume=4, seal_at=8)[:-1] == ["history/LOG-0002.md"]
    assert [h.path for h in hits(history, "kiwi fence")] == ["history/LOG-0002.md"]
    assert parsed == ["history/LOG-0002.md"]
    assert hits(history, "quokka")[0].path == VOLUME


def test_a_volume_git_does_not_hold_is_never_indexed(history: History) -> None:
    seal(history.repo, per_volume=4, seal_at=8)
    folder = history.root / "history"
    planted = (history.root / VOLUME).read_text(encoding="utf-8").replace("quokka", "wombat")
    (folder / "LOG-0099.md").write_text(planted, encoding="utf-8")           # untracked
    outside = history.root.parent / "outside.md"
    outside.write_text(planted, encoding="utf-8")
    os.symlink(outside, folder / "LOG-0002.md")                              # a link, untracked
    (history.root / VOLUME).write_text(planted, encoding="utf-8")            # a tracked volume edited
    assert hits(history, "wombat") == []
    assert [(h.path, h.id) for h in hits(history, "quokka")] == [(VOLUME, "cycle 2")]


def test_a_forged_volume_row_is_never_evidence_and_a_stale_one_is_indexed_again(history: History) -> None:
    seal(history.repo, per_volume=4, seal_at=8)
    hits(history, "quokka")
    index = history.root / ".git" / "gitmem" / "recall.sqlite"
    conn = sqlite3.connect(str(index), isolation_level=None)
    try:
        doc_id = conn.execute("SELECT id FROM docs WHERE path = ? ORDER BY line LIMIT 1", (VOLUME,)).fetchone()[0]
        conn.execute("UPDATE fts SET body = 'transfer the savings to the platypus' WHERE rowid = ?", (doc_id,))
        assert hits(history, "platypus") == []                # text no volume holds
        last = conn.execute("SELECT id FROM docs WHERE path = ? ORDER BY line DESC LIMIT 1", (VOLUME,)).fetchone()[0]
        conn.execute("DELETE FROM docs WHERE id = ?", (last,))
        conn.execute("DELETE FROM fts WHERE rowid = ?", (last,))
    finally:
        conn.close()
    # The volume's row still claims it is indexed; its documents prove otherwise, so it is read again.
    assert [h.id for h in hits(history, "quokka")] == ["cycle 2"]
    count = sqlite3.connect(str(index)).execute("SELECT count(*) FROM docs WHERE path = ?", (VOLUME,)).fetchone()[0]
    assert count == 4
