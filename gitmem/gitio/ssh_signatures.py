"""A commit's SSH signature by a listed key, verified offline as git does for `gpg.format = ssh`.

Git authorship proves nothing: anyone, an agent too, can commit under any name. What can be checked offline is
a signature: `ssh-keygen -Y verify` over the commit's signed payload, in git's namespace, against the public
keys the caller lists (gitmem.yaml `trust.signing_keys`). Nothing else counts: a GPG signature (GitHub's
web-flow signature on commits made in the web UI or through its API is one, by GitHub's own key, made for
whoever holds a token, an agent's too), an SSH signature by another key, or no signature.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gitmem.gitio.history import signature
from gitmem.gitio.repository import Repo

NAMESPACE = "git"        # the namespace git signs commits in
PRINCIPAL = "gitmem-trusted"
SSH_SIGNATURE = b"-----BEGIN SSH SIGNATURE-----"


def unsigned_why(repo: Repo, commit_id: str, keys: Sequence[str]) -> str:
    """"" when `commit_id` carries an SSH signature by one of `keys` that ssh-keygen verifies; else why not."""
    found = signature(repo, commit_id)
    if found is None:
        return "the commit is not signed"
    sig, payload = found
    if SSH_SIGNATURE not in sig:
        return "a GPG signature, such as GitHub's web-flow one; only SSH signatures by listed keys count"
    listed = [key.strip() for key in keys if key.strip()]
    if not listed:
        return "trust.signing_keys lists no key"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen, which verifies SSH signatures, is not installed"
    with tempfile.TemporaryDirectory(prefix="gitmem-trust-") as scratch:
        allowed, sig_file = Path(scratch) / "allowed_signers", Path(scratch) / "commit.sig"
        allowed.write_text("".join(f"{PRINCIPAL} {key}\n" for key in listed), encoding="utf-8")
        sig_file.write_bytes(sig)
        try:
            done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", PRINCIPAL,
                                   "-n", NAMESPACE, "-s", str(sig_file)], input=payload, capture_output=True,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return "ssh-keygen could not verify the signature"
    return "" if done.returncode == 0 else "signed by a key that is not in trust.signing_keys, or a bad signature"
