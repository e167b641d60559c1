"""Private working copies of the cached synthetic repositories (tests.support.synth), for writing into."""
from __future__ import annotations

from pathlib import Path

import pygit2

from tests.support.synth import SynthInfo


def working_copy(info: SynthInfo, dest: Path) -> Path:
    """A private clone that borrows the cached repo's objects (git alternates), checked out at its HEAD.

    Tests and benchmarks stage and write here, never in the cache.
    """
    repo = pygit2.init_repository(str(dest), initial_head="main")
    source = pygit2.Repository(info.path)
    alternates = Path(repo.path) / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(str(Path(source.path) / "objects") + "\n", encoding="utf-8")
    repo = pygit2.Repository(str(dest))
    repo.config["user.name"], repo.config["user.email"] = source.config["user.name"], source.config["user.email"]
    repo.references.create("refs/heads/main", pygit2.Oid(hex=info.head), force=True)
    repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
    return dest
