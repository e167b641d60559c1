"""Running a command on a pseudo-terminal, for output that only a terminal gets (colour, progress bars)."""
from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path


def run_on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str], *, stdout_too: bool = True,
                      timeout: int = 120) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """Run `argv` with stderr (and stdout, unless `stdout_too` is False: then it is captured) on a pty;
    returns the finished process and everything the terminal received."""
    leader, follower = pty.openpty()
    done = subprocess.run(argv, cwd=cwd, stdout=follower if stdout_too else subprocess.PIPE, stderr=follower,
                          env=env, timeout=timeout)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:      # the pty reports EIO once the process has gone and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return done, b"".join(chunks).decode("utf-8", "replace")
