"""gitmem: git-native long-term memory for AI agents."""
from __future__ import annotations

__version__ = "0.2.0"
# Where gitmem is published: owner/name on GitHub. With __version__ above, the one place a release edits;
# `python tests/test_release_pins.py` then rewrites every copy (pyproject.toml's URLs, the template's
# pre-commit `rev:` and action ref, the install lines in the READMEs and the CHANGELOG's links).
REPOSITORY = "gitmem-agent/gitmem"
