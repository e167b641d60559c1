"""The copies of gitmem's public address and pinned ref outside `gitmem/__init__.py`, found and rewritten.

`gitmem/__init__.py` holds `REPOSITORY` (owner/name), `__version__`, `PINNED_REF` (the git ref every
install line names: `main` until this version's tag is published, then `v<version>`) and `PINNED_COMMIT` (the
commit of the tag `v<version>`, which the template's pre-commit `rev:` and action refs and the fleet workflow's
install pin, with the tag in a comment): the one place a release edits. Every other mention is a copy that
must agree: pyproject.toml's URLs, the template's pins, the action in the docs' examples, the install lines in
the READMEs and the plain hooks, the CHANGELOG's links. `tests/project/test_release_pins.py` checks them; run it
as a script to rewrite them all from the one place. docs/releasing.md is the procedure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
VERSION = r"\d+\.\d+\.\d+[\w.]*"
REF = r"[\w.-]+"        # a tag, a branch or a commit sha
COMMIT = r"[0-9a-f]{40}"
TAG = rf"v{VERSION}"
OURS = r"(?!actions/)"   # gitmem's own action; the third-party ones are pinned to commits by hand


@dataclass(frozen=True)
class Copy:
    """A pattern for one kind of copy in one file; its groups `repo` and `ref` are the copied values."""

    path: str
    pattern: str
    why: str

    def matches(self) -> list[re.Match[str]]:
        return list(re.finditer(self.pattern, (ROOT / self.path).read_text(encoding="utf-8"), re.M))


COPIES = (
    Copy("pyproject.toml", rf'^\w+ = "https://github\.com/(?P<repo>{NAME})(?:/[^"]*)?"$', "[project.urls]"),
    Copy("template-repo/.pre-commit-config.yaml", rf"repo: https://github\.com/(?P<repo>{NAME})$",
         "the hooks' repository"),
    Copy("template-repo/.pre-commit-config.yaml", rf"rev: (?P<commit>{COMMIT})  # frozen: (?P<tag>{TAG})$",
         "the hooks' pin"),
    Copy("template-repo/.github/workflows/gitmem.yml",
         rf"uses: {OURS}(?P<repo>{NAME})@(?P<commit>{COMMIT}) # (?P<tag>{TAG})$", "the action's pin"),
    Copy("template-repo/.github/workflows/gitmem-check.yml",
         rf"uses: {OURS}(?P<repo>{NAME})@(?P<commit>{COMMIT}) # (?P<tag>{TAG})$", "the action's pin"),
    Copy("template-repo/README.md", rf"\(https://github\.com/(?P<repo>{NAME})\)", "the link to gitmem"),
    Copy("template-repo/README.md", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'",
         "the install line"),
    Copy("README.md", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'", "the install lines"),
    Copy("docs/recall.md", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'", "the install lines"),
    Copy("docs/codex.md", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'", "the install line"),
    Copy("hooks/pre-commit", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'", "the install hint"),
    Copy("hooks/pre-push", rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<ref>{REF})'", "the install hint"),
    Copy("README.md", rf"uses: {OURS}(?P<repo>{NAME})@(?P<commit>{COMMIT}) # (?P<tag>{TAG})$",
         "the action in the example"),
    Copy("docs/codex.md", rf"uses: {OURS}(?P<repo>{NAME})@(?P<commit>{COMMIT}) # (?P<tag>{TAG})$",
         "the action in the example"),
    Copy("template-fleet/.github/workflows/fleet.yml",
         rf"git\+https://github\.com/(?P<repo>{NAME})@(?P<commit>{COMMIT})'  # (?P<tag>{TAG})$",
         "the fleet workflow's install, pinned like the action"),
    # The notes of each version are written by hand (tests/project/test_release_pins.py asks for this version's);
    # only the address in their links is a copy.
    Copy("CHANGELOG.md", rf"^\[{VERSION}\]: https://github\.com/(?P<repo>{NAME})/releases/tag/", "the releases' links"),
)


ONE_PLACE = ("REPOSITORY", "__version__", "PINNED_REF", "PINNED_COMMIT")


def the_one_place() -> tuple[str, str, str, str]:
    """(REPOSITORY, __version__, PINNED_REF, PINNED_COMMIT), read from gitmem/__init__.py as text: what the
    checkout says, not an install."""
    text = (ROOT / "gitmem" / "__init__.py").read_text(encoding="utf-8")
    found = [re.search(rf'^{name} = "([^"]+)"$', text, re.M) for name in ONE_PLACE]
    assert all(found), f"gitmem/__init__.py must define {', '.join(ONE_PLACE)}"
    repo, version, ref, commit = (match.group(1) for match in found if match)
    return repo, version, ref, commit


def expected_values() -> dict[str, str]:
    """What each named group of a copy must hold."""
    repo, version, ref, commit = the_one_place()
    return {"repo": repo, "ref": ref, "commit": commit, "tag": f"v{version}"}


def stale() -> list[str]:
    """`path: why: found X, expected Y` for every copy that disagrees, or a kind of copy that is missing."""
    expected = expected_values()
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
    values = expected_values()
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
