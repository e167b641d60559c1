"""gitmem: git-native long-term memory for AI agents."""
from __future__ import annotations

__version__ = "0.2.0"
# Where gitmem is published: owner/name on GitHub. With __version__ and PINNED_REF below, the one place a
# release edits; `python tests/project/test_release_pins.py` then rewrites every copy (pyproject.toml's URLs, the
# template's pre-commit `rev:` and action refs, the install lines in the READMEs and hooks, the CHANGELOG's
# links). docs/releasing.md says how a release is cut.
REPOSITORY = "gitmem-agent/gitmem"
# The git ref every install line and every pin in the template names. A tag that is not published yet
# installs nothing, so until this version's tag exists it is the branch releases are cut from; cutting the
# release sets it to f"v{__version__}" (tests/project/test_release_pins.py holds the CHANGELOG to the same state).
PINNED_REF = "main"
# The commit tagged f"v{__version__}": what the template pins gitmem's action and pre-commit hooks to, a commit with
# the tag in a comment (`@<sha> # v0.2.0`, `rev: <sha>  # frozen: v0.2.0`), as zizmor and Dependabot expect and so
# that pre-commit never warns of a mutable `rev:`. The release step writes it once the tag is pushed (a commit
# cannot name itself); tests/project/test_release_pins.py holds the tag, when this checkout has it, to this commit.
PINNED_COMMIT = "843abd77e23f3d76466a614fc3bb95e152c3a5de"
DISTRIBUTION = "gitmem-agent"


def install_spec(extra: str | None = None) -> str:
    """What `pip install` takes to install gitmem (with `extra`): no package index has it, so the git URL at
    PINNED_REF. To pin a commit instead, put its sha where the ref is."""
    name = f"{DISTRIBUTION}[{extra}]" if extra else DISTRIBUTION
    return f"{name} @ git+https://github.com/{REPOSITORY}@{PINNED_REF}"


def install_command(extra: str | None = None) -> str:
    """The one install line every hint prints: a command that works today, quoted for a POSIX shell."""
    return f"pip install '{install_spec(extra)}'"
