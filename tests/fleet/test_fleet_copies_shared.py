"""Two fleet reads at once share the agents' read-only copies in the cache (a human's `gitmem fleet status` while
a cron job's `gitmem fleet report` runs, two terminals, two fleet files naming the same agent): they take turns
on each copy. Before, both ran `git fetch` in the same copy, one failed on the other's `shallow.lock`, its agent
showed as unreadable (exit 2), and the copy was marked as failed, so every `--offline` read after it refused the
agent until the next fetch, though the copy was current."""
from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.read import UNREADABLE, cache_dir, read_agent
from gitmem.gitio.readonly import last_fetch_failed
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import make_repo


def test_reads_of_one_copy_at_once_take_turns_and_each_reads_the_agent(tmp_path: Path, git_env: None,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    agent = make_repo(tmp_path / "agent")
    MemoryWriter(Workspace.at(agent.path)).add_log_entry(task="keep going", outcome="built", result="done")
    git(agent.path, "commit", "-qam", "a cycle")
    (tmp_path / "fleet.yaml").write_text(f"agents:\n  - name: agent\n    repo: {agent.path.as_uri()}\n",
                                         encoding="utf-8")
    entry = load_fleet(tmp_path / "fleet.yaml").agents[0]
    read_agent(entry, tmp_path, datetime.now(UTC), timeout=60, with_page=False)       # the copy exists
    verdicts: list[str] = []
    errors: list[str] = []

    def read() -> None:
        row = read_agent(entry, tmp_path, datetime.now(UTC), timeout=60, with_page=False)[0].row
        verdicts.append(row.verdict)
        errors.append(row.error or "")

    for n in range(3):
        (agent.path / "notes.txt").write_text(f"round {n}\n", encoding="utf-8")
        git(agent.path, "add", "notes.txt")
        git(agent.path, "commit", "-qm", "a new commit: every read fetches")
        readers = [threading.Thread(target=read) for _ in range(8)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
    assert UNREADABLE not in verdicts, [e for e in errors if e]
    assert not last_fetch_failed(cache_dir(entry, {"XDG_CACHE_HOME": str(tmp_path / "cache")}))


def test_a_cache_that_cannot_be_written_still_reads_offline_as_before(tmp_path: Path, git_env: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking a turn writes a lock file beside the copy; where the cache cannot be written there is no fetch to
    take turns with, and an offline read says what it finds (here: nothing fetched), never a traceback."""
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: agent\n    repo: https://github.com/acme/agent\n",
                                         encoding="utf-8")
    entry = load_fleet(tmp_path / "fleet.yaml").agents[0]
    row = read_agent(entry, tmp_path, datetime.now(UTC), timeout=5, with_page=False, offline=True)[0].row
    assert row.verdict == UNREADABLE and "has not been fetched yet" in (row.error or "")
