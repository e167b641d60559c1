"""Seal a test repository's LOG the way rules 6 does (`gitmem.memory.volumes.plan`): the volumes and the new
LOG.md written and committed as one change. Until the checks prove a seal, the commit skips the hooks."""
from __future__ import annotations

from pathlib import Path

from gitmem.memory import volumes
from tests.support.helpers import GitRepo


def seal_files(root: Path, log_path: str = "LOG.md", *, per_volume: int, seal_at: int) -> list[str]:
    """Write the seal of `root`'s LOG into the work tree; the paths written (volumes first); [] when none is due."""
    data = (root / log_path).read_bytes()
    folder = root / volumes.volume_folder(log_path)
    number = 1 + len(volumes.numbered(log_path, [f"{volumes.volume_folder(log_path)}/{p.name}"
                                                  for p in folder.glob("*")] if folder.is_dir() else []))
    seal = volumes.plan(data, log_path, number, per_volume=per_volume, seal_at=seal_at)
    if seal is None:
        return []
    written = []
    for n, content in seal.volumes:
        path = volumes.volume_path(log_path, n)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
        written.append(path)
    (root / log_path).write_bytes(seal.live)
    return [*written, log_path]


def seal(repo: GitRepo, log_path: str = "LOG.md", *, per_volume: int, seal_at: int) -> list[str]:
    """Seal and commit; the paths the seal wrote."""
    written = seal_files(repo.path, log_path, per_volume=per_volume, seal_at=seal_at)
    if written:
        repo.stage(*written)
        repo.commit(f"Seal {len(written) - 1} LOG volume(s)")
    return written


def seal_committed(root: Path, log_path: str = "LOG.md") -> list[str]:
    """Seal `root`'s LOG at the format's own sizes (`volumes.SEAL_AT`, `VOLUME_ENTRIES`) and commit it with git,
    as the first cycle under rules 6 does for an old LOG (the benchmarks' setup); the paths written."""
    import os
    import subprocess

    written = seal_files(root, log_path, per_volume=volumes.VOLUME_ENTRIES, seal_at=volumes.SEAL_AT)
    if written:
        env = {**os.environ, "GIT_AUTHOR_NAME": "gitmem", "GIT_AUTHOR_EMAIL": "agent@example.com",
               "GIT_COMMITTER_NAME": "gitmem", "GIT_COMMITTER_EMAIL": "agent@example.com"}
        subprocess.run(["git", "add", "--", *written], cwd=root, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", f"Seal {len(written) - 1} LOG volume(s)", "--no-verify"],
                       cwd=root, env=env, check=True)
    return written
