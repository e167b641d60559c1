"""`gitmem status` is one screen: at most 40 lines, and a line the agent's text fills (a task, a decision's or a
lesson's title, up to the format's limits: thousands of characters, 200 for a decision's title, GM214) does not
wrap over many screens. The text dashboard cuts each such text with `…`; `--json` and `gitmem pending` keep it
whole."""
from __future__ import annotations

import json

from gitmem.memory_writer import MemoryWriter
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

WIDE = 160          # the widest dashboard line: its labels and counts beside one cut text


def test_the_dashboard_cuts_the_agents_long_texts_and_json_keeps_them(memrepo: GitRepo, cli) -> None:
    memory = MemoryWriter(memrepo.ws())
    memory.add_log_entry(task="K" * 6000, outcome="built", result="done", cycle=1)
    memory.ask_decision(title="T" * 200, recommendation="yes", cycle=1)     # the longest a title may be
    memory.add_lesson(title="L" * 3000, happened="h", why="w", change="c", cycle=1)
    git(memrepo.path, "commit", "-qam", "long texts")

    text = cli(["status"], cwd=memrepo.path)
    assert text.code == 0, text.err
    assert max(len(line) for line in text.out.splitlines()) <= WIDE, text.out
    assert "· KKKK" in text.out and "K…" in text.out and "D-0001 · TTTT" in text.out and "T… (0h)" in text.out
    assert "L-0001 · LLLL" in text.out
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert data["last_cycle"]["task"] == "K" * 6000 and data["pending"][0]["title"] == "T" * 200
