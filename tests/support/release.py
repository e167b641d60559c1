"""The copies of gitmem's public address and version outside `gitmem/__init__.py`, found and rewritten.

`gitmem/__init__.py` holds `REPOSITORY` (owner/name) and `__version__`: the one place a release edits.
Every other mention is a copy that must agree: pyproject.toml's URLs, the template's pre-commit `rev:` and
action ref, the install lines in the READMEs, the CHANGELOG's links. `tests/test_release_pins.py` checks
them; run it as a script to rewrite them all from the one place.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
VERSION = r"\d+\.\d+\.\d+[\w.]*"


@dataclass(frozen=True)
class Copy:
    """A pattern for one kind of copy in one file; its groups `repo` and `version` are the copied values."""

    path: str
    pattern: str
    why: str

    def matches(self) -> list[re.Match[str]]:
        return list(re.finditer(self.pattern, (ROOT / self.path).read_text(encoding="utf-8"), re.M))


COPIES = (
    Copy("pyproject.toml", rf'^\w+ = "https://github\.com/(?P<repo>{NAME})(?:/[^"]*)?"$', "[project.urls]"),
    Copy("template-repo/.pre-commit-config.yaml", rf"repo: https://github\.com/(?P<repo>{NAME})$",
         "the hooks' repository"),
    Copy("template-repo/.pre-commit-config.yaml", rf"rev: v(?P<version>{VERSION})$", "the hooks' pin"),
    Copy("template-repo/.github/workflows/gitmem.yml", rf"uses: (?P<repo>{NAME})@v(?P<version>{VERSION})\b",
         "the action's ref"),
    Copy("template-repo/.github/workflows/gitmem-check.yml", rf"uses: (?P<repo>{NAME})@v(?P<version>{VERSION})\b",
         "the action's ref"),
    Copy("template-repo/README.md", rf"\(https://github\.com/(?P<repo>{NAME})\)", "the link to gitmem"),
    Copy("template-repo/README.md", rf"git\+https://github\.com/(?P<repo>{NAME})@v(?P<version>{VERSION})'",
         "the install line"),
    Copy("README.md", rf"git\+https://github\.com/(?P<repo>{NAME})@v(?P<version>{VERSION})'", "the install lines"),
    Copy("README.md", rf"uses: (?P<repo>{NAME})@v(?P<version>{VERSION})\b", "the action in the example"),
    # The notes of each version are written by hand (tests/test_release_pins.py asks for this version's);
    # only the address in their links is a copy.
    Copy("CHANGELOG.md", rf"^\[{VERSION}\]: https://github\.com/(?P<repo>{NAME})/releases/tag/", "the releases' links"),
)


def the_one_place() -> tuple[str, str]:
    """(REPOSITORY, __version__), read from gitmem/__init__.py as text: what the checkout says, not an install."""
    text = (ROOT / "gitmem" / "__init__.py").read_text(encoding="utf-8")
    repo = re.search(r'^REPOSITORY = "([^"]+)"$', text, re.M)
    version = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    assert repo and version, "gitmem/__init__.py must define REPOSITORY and __version__"
    return repo.group(1), version.group(1)


def stale() -> list[str]:
    """`path: why: found X, expected Y` for every copy that disagrees, or a kind of copy that is missing."""
    repo, version = the_one_place()
    expected = {"repo": repo, "version": version}
    found: list[str] = []
    for copy in COPIES:
        matches = copy.matches()
        if not matches:
            found.append(f"{copy.path}: {copy.why}: not found (pattern {copy.pattern!r})")
        for match in matches:
            for group, value in match.groupdict().items():
                if value is not None and value != expected[group]:
                    found.append(f"{copy.path}: {copy.why}: {value!r}, expected {expected[group]!r}")
    return found


def rewrite() -> list[str]:
    """Rewrite every copy from the one place; the files changed."""
    repo, version = the_one_place()
    values = {"repo": repo, "version": version}
    changed: list[str] = []
    for path in dict.fromkeys(copy.path for copy in COPIES):
        target = ROOT / path
        text = original = target.read_text(encoding="utf-8")
        for copy in (c for c in COPIES if c.path == path):
            def replace(match: re.Match[str]) -> str:
                out, last = [], match.start()
                spans = sorted((match.span(g), values[g]) for g in match.groupdict() if match.group(g) is not None)
                for (start, end), value in spans:
                    out += [match.string[last:start], value]
                    last = end
                return "".join(out) + match.string[last:match.end()]
            text = re.sub(copy.pattern, replace, text, flags=re.M)
        if text != original:
            target.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
