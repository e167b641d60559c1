"""The tests that run gitmem as `nobody` work from any folder a user may clone into: the Quick start's second
command failed on a fresh clone in a private folder run as root (a 0700 home, as /root is), with
`ModuleNotFoundError: No module named 'gitmem'` in the three box tests "for an unprivileged user"."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.nobody import CHECKOUT, NOBODY, venv_for_nobody


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run a command as nobody")
def test_a_checkout_nobody_cannot_read_still_gives_nobody_a_venv_that_imports_gitmem(tmp_path: Path) -> None:
    private = tmp_path / "home"
    private.mkdir(mode=0o700)
    clone = private / "gitmem"
    clone.mkdir()
    for part in ("gitmem", "template-repo", "hooks"):
        shutil.copytree(CHECKOUT / part, clone / part, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    place = Path(tempfile.mkdtemp(prefix="gitmem-nobody-support-"))      # a folder nobody can enter
    try:
        place.chmod(0o755)
        bin_dir = venv_for_nobody(place, checkout=clone)
        done = subprocess.run([*NOBODY, str(bin_dir / "gitmem"), "--version"], capture_output=True, text=True,
                              cwd=place, check=False)
        assert done.returncode == 0, done.stderr
        template = subprocess.run([*NOBODY, str(bin_dir / "python"), "-c",
                                   "from gitmem.packaged import template_dir; print(template_dir())"],
                                  capture_output=True, text=True, cwd=place, check=False)
        assert template.returncode == 0 and template.stdout.startswith(str(place)), template
    finally:
        shutil.rmtree(place, ignore_errors=True)
