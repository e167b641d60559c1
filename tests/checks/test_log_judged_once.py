"""A change that alters LOG and LESSONS has its LOG append judged once: the LOG rules judge it, and GM407 (a lesson
line naming a cycle a replay renumbered) reads the entries it appended from that judgement, not from a second one
(its prefix proof hashes the old LOG, 75 MB at 100x). Real clones, a real `git pull --rebase` through the driver."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gitmem.checks.check_and_verify import verify_range
from gitmem.config import Config
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.publish.test_merge_renumbered_lessons import (
    _lesson,
    _session_cycle,
    laptop_confirmed_while_the_desktop_pushed,
)
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def test_gm407_takes_the_log_rules_judgement_of_the_append(tmp_path: Path, memrepo: GitRepo,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    second = laptop_confirmed_while_the_desktop_pushed(tmp_path, memrepo)
    _session_cycle(second, "laptop again")
    _lesson(second, "another lesson")
    git(second.path, "commit", "-q", "-am", "session: the laptop, a cycle and a lesson", who=DANA)
    git(second.path, "pull", "-q", "--rebase", "origin", "main", who=DANA)
    upstream = git(second.path, "rev-parse", "origin/main", who=DANA).strip()

    judged: Counter[bytes | None] = Counter()
    judge = log.judge_append

    def counted(new: bytes | None, prefix: int | None, **kwargs: object) -> log.Append:
        judged[new] += 1
        return judge(new, prefix, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(log, "judge_append", counted)
    result = verify_range(Workspace.at(second.path, Config()), upstream, "HEAD")

    # Both replayed commits change LOG and LESSONS, and each one's new lesson line names its entry's old cycle.
    assert [(v.path, v.code) for v in result.violations] == [("LESSONS.md", "GM407")] * 2
    assert len(judged) == 2 and set(judged.values()) == {1}, judged.values()
