"""A fresh clone has no merge driver until `gitmem init` runs in it: git copies `.gitattributes` with a clone and
never its config, so a `git pull --rebase` there conflicted on LOG.md line by line, and nothing said why.
`gitmem check` and `gitmem status` now say so (GM925, a warning) and how to fix it. Real git, a real bare origin."""
from __future__ import annotations

import json
from pathlib import Path

from tests.cycle.test_two_writers import session, session_cycle
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git, run_git
from tests.support.helpers import DANA, GitRepo


def test_a_clone_without_the_driver_is_told_how_to_get_it(tmp_path: Path, memrepo: GitRepo) -> None:
    session(memrepo, "init")
    git(memrepo.path, "add", "-A", who=DANA)
    git(memrepo.path, "commit", "-q", "-m", "gitmem init: the merge driver", who=DANA)
    origin = origin_and_clone(tmp_path, memrepo)
    laptop = clone(origin, tmp_path / "laptop", DANA)
    line = next(n for n, text in enumerate(laptop.read(".gitattributes").splitlines(), 1) if "merge=gitmem" in text)

    checked = session(laptop, "check", check=False)
    shown = session(laptop, "status", "--json", check=False)
    in_ci = session(laptop, "check", "--format", "github", check=False)     # the Action's checkout merges nothing
    assert in_ci.returncode == 0 and "GM925" not in in_ci.stdout + in_ci.stderr

    assert checked.returncode == 0, checked.stdout + checked.stderr
    said = [text for text in checked.stdout.splitlines() if "GM925" in text]
    assert len(said) == 1 and said[0].startswith(f".gitattributes:{line}: GM925 warning: "), checked.stdout
    assert "run `gitmem init` once in this clone" in said[0]
    setup = json.loads(shown.stdout)["setup"]
    assert [(found["path"], found["line"], found["code"]) for found in setup] == [(".gitattributes", line, "GM925")]
    assert "GM925" in session(laptop, "status", check=False).stdout

    # What it warns of: both write, and the clone's rebase conflicts by lines; after `gitmem init`, it merges.
    session_cycle(memrepo, "on the first machine")
    session_cycle(laptop, "on the laptop", push=False)
    pulled = run_git(laptop.path, "pull", "--rebase", "--quiet", check=False)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout + pulled.stderr
    git(laptop.path, "rebase", "--abort", who=DANA)
    session(laptop, "init")
    assert "GM925" not in session(laptop, "check", check=False).stdout
    git(laptop.path, "pull", "--rebase", "--quiet", who=DANA)
    assert "<<<<<<<" not in laptop.read("LOG.md")
