"""Which commits made in the runner's checkout count as the human's: those SSH-signed by a trusted key.

Git authorship proves nothing: in a local checkout an agent can commit under any name.

A commit made in the runner's checkout during a cycle counts as the human's only when it carries an SSH
signature by one of the keys in `trust.signing_keys` (a protected path: the agent cannot add its own), verified
as gitmem.gitio.ssh_signatures says. Everything else reaches main through the remote.
"""
from __future__ import annotations

from collections.abc import Sequence

from gitmem import gitio


def signed_by_trusted_key(repo: gitio.Repo, commit_id: str, keys: Sequence[str]) -> bool:
    """Whether `commit_id` is signed by one of `keys` (an SSH signature that ssh-keygen verifies)."""
    return bool(keys) and gitio.unsigned_why(repo, commit_id, keys) == ""


def all_trusted(repo: gitio.Repo, commit_ids: Sequence[str], keys: Sequence[str]) -> bool:
    return bool(commit_ids) and all(signed_by_trusted_key(repo, commit_id, keys) for commit_id in commit_ids)
