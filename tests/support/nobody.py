"""Running a test's cycle as the unprivileged user `nobody`: as root the sandbox proves little about a runner.

`NOBODY` is the `setpriv` prefix; `bwrap_works(prefix)` says whether bwrap can make its namespaces run that
way; `venv_for_nobody(place)` makes a venv `nobody` can run (the test's own interpreter may live where only
root can read); `nobody_place(prefix)` is a folder `nobody` can enter with such a venv in it (the test skips
where the box cannot run as `nobody`); `shared_tree(source, place)` gives `nobody` a read-only view of an
install root keeps in a private directory (hard links, so a 250 MB agent CLI costs nothing to copy, and
`nobody` cannot change it). `runs_nobodys_venv(repo, bin_dir)` points a test repository's agent at that venv,
and `gitmem_as_nobody(place, bin_dir, cwd, *args)` hands the folder to `nobody` and runs gitmem there as it.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BWRAP = shutil.which("bwrap")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
CHECKOUT = Path(__file__).resolve().parents[2]


def bwrap_works(prefix: list[str]) -> bool:
    if BWRAP is None:
        return False
    done = subprocess.run([*prefix, BWRAP, "--ro-bind", "/", "/", "true"], capture_output=True)
    return done.returncode == 0


def venv_for_nobody(place: Path, *, checkout: Path = CHECKOUT) -> Path:
    """The bin directory of a venv `nobody` can run: the system's Python of this version, importing this
    checkout's packages through a `.pth` file, with a `gitmem` script. Where `nobody` cannot read the checkout or
    this venv (a clone in a private folder, as root's home is), what gitmem imports is first given to it under
    `place` (`shared_tree`: hard links, read-only to `nobody`)."""
    system = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}", path="/usr/bin:/usr/local/bin")
    if system is None:
        pytest.skip(f"no system python{sys.version_info.major}.{sys.version_info.minor} for the unprivileged run")
    venv = place / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)))
    source = checkout
    if not _nobody_reads(site) or not _nobody_reads(checkout / "gitmem" / "__init__.py"):
        site = shared_tree(site, place / "site")
        source = place / "checkout"
        source.mkdir()
        for part in ("gitmem", "template-repo", "hooks"):     # gitmem.packaged finds these beside the package
            shared_tree(checkout / part, source)
    (next(venv.glob("lib/python*/site-packages")) / "gitmem-checkout.pth").write_text(
        f"{site}\n{source}\n", encoding="utf-8")
    (venv / "bin" / "gitmem").write_text(f"#!{venv}/bin/python\nimport sys\nfrom gitmem.cli import main\n"
                                         "sys.exit(main())\n", encoding="utf-8")
    (venv / "bin" / "gitmem").chmod(0o755)
    return venv / "bin"


def _nobody_reads(path: Path) -> bool:
    """Whether `nobody` can read `path` (every folder above it searchable, the file itself readable)."""
    return subprocess.run([*NOBODY, "test", "-r", str(path)], capture_output=True).returncode == 0


def shared_tree(source: Path, place: Path) -> Path:
    """`source` as `place/<its name>`, hard-linked file by file (copied across file systems), owned by root:
    never chown it, or the links would change the original's owner too."""
    target = place / source.name

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link)
    return target


@contextlib.contextmanager
def nobody_place(prefix: str) -> Iterator[tuple[Path, Path]]:
    """(a private folder `nobody` can enter, the bin directory of a venv it can run there), removed afterwards.
    Skips the test where bwrap cannot make its namespaces as `nobody`."""
    if not bwrap_works(NOBODY):
        pytest.skip("unprivileged user namespaces are not available on this machine (bwrap fails as nobody)")
    place = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        place.chmod(0o755)
        yield place, venv_for_nobody(place)
    finally:
        shutil.rmtree(place, ignore_errors=True)


def runs_nobodys_venv(repo: Any, bin_dir: Path) -> None:
    """Commit `repo`'s gitmem.yaml with its agent's interpreter (the test's own, which `nobody` may not read)
    replaced by the one in `nobody`'s venv. `repo` is a tests.support.helpers.GitRepo."""
    text = repo.read("gitmem.yaml").replace(json.dumps(sys.executable)[1:-1], str(bin_dir / "python"))
    repo.commit_files({"gitmem.yaml": text}, "the agent runs with the venv nobody can read")


def nobody_env(place: Path, bin_dir: Path, **more: str) -> dict[str, str]:
    """The whole environment of a run as `nobody` in `place`: its venv first on PATH, `place` as HOME."""
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "HOME": str(place), "LANG": "C.UTF-8", **more}


def gitmem_as_nobody(place: Path, bin_dir: Path, cwd: Path, *args: str,
                     env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`gitmem ARGS` run as `nobody` in `cwd`, after everything in `place` is handed to `nobody`."""
    subprocess.run(["chown", "-R", "65534:65534", str(place)], check=True)
    return subprocess.run([*NOBODY, str(bin_dir / "gitmem"), *args], cwd=cwd,
                          env=env if env is not None else nobody_env(place, bin_dir),
                          capture_output=True, text=True, timeout=300)
