"""The rules version the docs name is the one the code holds: the README's upgrade steps and the config table
said 3 while gitmem.yaml's template, the trailers and `rules_version`'s bound were at 6, so a user who followed
the README set an old version by hand."""
from __future__ import annotations

import re
from pathlib import Path

from gitmem.codes import RULES_VERSION

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"this release's are (\d+)\)|`Gitmem-Rules: (\d+)`|sets `rules_version: (\d+)`|\(1 to (\d+)\)|"
                   r"`rules_version` in gitmem\.yaml, (\d+) in this release")


def _versions_named(text: str) -> list[int]:
    return [int(next(group for group in found.groups() if group)) for found in NAMED.finditer(text)]


def test_the_readme_upgrade_steps_name_this_releases_rules_version() -> None:
    named = _versions_named((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(named) >= 3, named
    assert set(named) == {RULES_VERSION}


def test_the_config_table_bounds_rules_version_as_the_code_does() -> None:
    table = [line for line in (ROOT / "docs" / "format.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| `rules_version` |")]
    assert len(table) == 1
    assert _versions_named(table[0]) == [RULES_VERSION]

