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
    ("    repo: https://github.com/acme/..\n", "fleet.yaml:3: GM928 agents[0].repo: its GitHub owner/name 'acme/..'"),
    ("    repo: https://github.com/acme/.\n", "fleet.yaml:3: GM928 agents[0].repo: its GitHub owner/name 'acme/.'"),
    ("    repo: https://github.com/acme/x%2F..%2Fdeploy\n",
     "fleet.yaml:3: GM928 agents[0].repo: its GitHub owner/name 'acme/x%2F..%2Fdeploy'"),
    ("    repo: ssh://git@github.com/acme/a%20b.git\n", "fleet.yaml:3: GM928 agents[0].repo: its GitHub owner/name"),
    ("    repo: agent\n    github: acme/..\n", "fleet.yaml:4: GM928 agents[0].github: expected owner/name"),
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


def test_two_names_that_differ_only_in_case_are_refused_as_their_pages_would_be_one_file() -> None:
    """`Writer` and `writer` wrote agents/Writer.html and agents/writer.html: one file on macOS and Windows,
    where one agent's report stood behind the other's link."""
    text = "agents:\n  - name: Writer\n    repo: a\n  - name: writer\n    repo: b\n"
    with pytest.raises(ConfigError) as refused:
        parse_fleet(text.encode(), path=Path("fleet.yaml"))
    assert str(refused.value) == ("fleet.yaml:4: GM932 agents[1].name: 'writer' is also the name of agents[0] "
                                  "(line 2) ('Writer', which differs only in case: agents' pages are files, and "
                                  "some file systems ignore case); names are unique")
    # In a long fleet, the first entry's line says where it is: an index alone is counted by hand.
    many = "agents:\n" + "".join(f"  - name: a{n}\n    repo: a{n}\n" for n in range(60)) + "  - name: a7\n    repo: b\n"
    with pytest.raises(ConfigError) as twice:
        parse_fleet(many.encode(), path=Path("fleet.yaml"))
    assert str(twice.value).startswith("fleet.yaml:122: GM932 agents[60].name: 'a7' is also the name of agents[7] "
                                       "(line 16); names are unique"), twice.value
    kept = parse_fleet(b"agents:\n  - name: writer\n    repo: a\n  - name: writer2\n    repo: b\n",
                       path=Path("fleet.yaml"))
    assert [entry.name for entry in kept.agents] == ["writer", "writer2"]
