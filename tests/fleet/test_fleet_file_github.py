"""fleet.yaml's GitHub owner/name, given as `github:` or read from a repo URL, goes into the Actions API's paths
with the dispatch token: both are held to what GitHub allows, so `..` or an encoded slash never reaches a path."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.config import ConfigError
from gitmem.fleet.fleetfile import parse_fleet


def _fleet(entry: str):
    return parse_fleet(f"agents:\n  - name: a\n{entry}".encode(), path=Path("fleet.yaml"))


REFUSED = [
    ("    repo: https://github.com/acme/..\n", "fleet.yaml:3: agents[0].repo: its GitHub owner/name 'acme/..'"),
    ("    repo: https://github.com/acme/.\n", "fleet.yaml:3: agents[0].repo: its GitHub owner/name 'acme/.'"),
    ("    repo: https://github.com/acme/x%2F..%2Fdeploy\n",
     "fleet.yaml:3: agents[0].repo: its GitHub owner/name 'acme/x%2F..%2Fdeploy'"),
    ("    repo: ssh://git@github.com/acme/a%20b.git\n", "fleet.yaml:3: agents[0].repo: its GitHub owner/name"),
    ("    repo: agent\n    github: acme/..\n", "fleet.yaml:4: agents[0].github: expected owner/name"),
]
KEPT = [
    ("    repo: https://github.com/acme/agent.git\n", "acme/agent"),
    ("    repo: git@github.com:acme/the.agent.git\n", "acme/the.agent"),
    ("    repo: https://github.com/acme/x%2Fy\n    github: acme/y\n", "acme/y"),
    ("    repo: https://gitlab.com/acme/..\n", None),
]


def test_an_owner_name_github_does_not_allow_is_refused_with_its_line_and_a_real_one_is_kept() -> None:
    for entry, where in REFUSED:
        with pytest.raises(ConfigError) as raised:
            _fleet(entry)
        assert str(raised.value).startswith(where), entry
    for entry, github in KEPT:
        assert _fleet(entry).agents[0].github == github, entry
