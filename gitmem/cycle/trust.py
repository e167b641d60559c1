"""Whose commit is it? Git authorship proves nothing: in a local checkout an agent can commit under any name.

A commit made in the runner's checkout during a cycle counts as the human's only when it carries an SSH
signature by one of the keys in `trust.signing_keys` (a protected path: the agent cannot add its own), verified
with `ssh-keygen -Y verify` as git does for `gpg.format = ssh`. Everything else reaches main through the remote.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gitmem import gitio

NAMESPACE = "git"        # the namespace git signs commits in
PRINCIPAL = "gitmem-trusted"


def signed_by_trusted_key(repo: gitio.Repo, commit_id: str, keys: Sequence[str]) -> bool:
    """Whether `commit_id` is signed by one of `keys` (an SSH signature that ssh-keygen verifies)."""
    found = gitio.signature(repo, commit_id)
    if not keys or found is None or shutil.which("ssh-keygen") is None:
        return False
    signature, payload = found
    if b"-----BEGIN SSH SIGNATURE-----" not in signature:
        return False         # a GPG signature: not a key listed here
    with tempfile.TemporaryDirectory(prefix="gitmem-trust-") as scratch:
        allowed, sig = Path(scratch) / "allowed_signers", Path(scratch) / "commit.sig"
        allowed.write_text("".join(f"{PRINCIPAL} {key.strip()}\n" for key in keys if key.strip()), encoding="utf-8")
        sig.write_bytes(signature)
        try:
            done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", PRINCIPAL,
                                   "-n", NAMESPACE, "-s", str(sig)], input=payload, capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def all_trusted(repo: gitio.Repo, commit_ids: Sequence[str], keys: Sequence[str]) -> bool:
    return bool(commit_ids) and all(signed_by_trusted_key(repo, commit_id, keys) for commit_id in commit_ids)
