"""A file the runner holds out of the commit (too big, or a repository the agent made) is masked as a committed
file is: `.git/gitmem/held` is local, but a scheduled run's cache carries `.git/gitmem` to the next runner, and a
pull request's workflow can restore that cache."""
from __future__ import annotations

import os
import subprocess

from gitmem.cycle.runner import Settings, run_cycle
from tests.support.cycle_support import WritingBackend
from tests.support.helpers import GitRepo

NAME, VALUE = "DEPLOY_TOKEN", "held-out-value-7f3c9a1b2e"


def test_a_held_file_holding_a_secret_value_is_kept_masked_and_whole(memrepo: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv(NAME, VALUE)
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  max_file_bytes: 4096\n"})

    def act(memory, request) -> None:
        (request.root / "dump.txt").write_text("x" * 8000 + f"\nconnect with {VALUE} now\n" + "y" * 100,
                                               encoding="utf-8")
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = run_cycle(memrepo.ws(), WritingBackend(act), settings=Settings())
    assert report.exit_code == 0, report.error
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "dump.txt"
    kept = held.read_text(encoding="utf-8")
    assert VALUE not in kept and "connect with *** now" in kept
    assert kept.startswith("x" * 8000) and kept.endswith("y" * 100)        # everything else as the agent wrote it
    note = next(line for line in memrepo.read("LOG.md").splitlines() if "kept dump.txt" in line)
    assert "a secret value in it was masked" in note and VALUE not in memrepo.read("LOG.md")


def test_the_files_of_a_held_repository_are_masked_and_its_history_still_clones(memrepo: GitRepo, tmp_path,
                                                                                monkeypatch) -> None:
    monkeypatch.setenv(NAME, VALUE)

    def act(memory, request) -> None:
        sub = request.root / "vendored"
        sub.mkdir()
        env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b.invalid",
               "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b.invalid"}
        subprocess.run(["git", "init", "-q", str(sub)], check=True, env=env)
        (sub / "settings.env").write_text(f"TOKEN={VALUE}\n", encoding="utf-8")
        (sub / "readme.txt").write_text("plain\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(sub), "add", "readme.txt"], check=True, env=env)
        subprocess.run(["git", "-C", str(sub), "commit", "-qm", "first"], check=True, env=env)
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = run_cycle(memrepo.ws(), WritingBackend(act), settings=Settings())
    assert report.exit_code == 0, report.error
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "vendored"
    assert (held / "settings.env").read_text(encoding="utf-8") == "TOKEN=***\n"
    assert (held / "readme.txt").read_text(encoding="utf-8") == "plain\n"
    copy = tmp_path / "look"
    subprocess.run(["git", "clone", "-q", str(held / ".git.held"), str(copy)], check=True)
    assert (copy / "readme.txt").read_text(encoding="utf-8") == "plain\n"
