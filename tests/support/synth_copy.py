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


def noop_agent_copy(info: SynthInfo, dest: Path) -> Path:
    """A `working_copy` whose agent is the `command` backend running `true` (a no-op), committed as a human
    would: a scheduled agent's checkout, ready for a cycle."""
    from tests.support.helpers import with_command_backend

    root = working_copy(info, dest)
    config = root / "gitmem.yaml"
    config.write_text(with_command_backend(config.read_text(encoding="utf-8"), "true"), encoding="utf-8")
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.add("gitmem.yaml")
    index.write()
    signature = pygit2.Signature("Dana Human", "dana@example.com")
    repo.create_commit("HEAD", signature, signature, "a no-op command agent", index.write_tree(), [repo.head.target])
    return root
