"""An agent that fills the disk: the cycle fails with a clear error and a no-build path, never a traceback.

The repository lives on a real small filesystem (a tmpfs of a few MB, mounted in a user and mount namespace by
`unshare -rm`, which works as root and as a user where user namespaces are allowed), and the agent writes until
the kernel says ENOSPC. Everything is checked inside the namespace (the tmpfs goes with it) and reported back."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent

pytestmark = pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a mount namespace")

# The agent writes memory, then fills the disk (and keeps what it wrote).
FILL = """
subprocess.run([GITMEM, 'log', 'add', '--task', 't', '--outcome', 'built', '--result', 'r'], check=True, cwd=root)
subprocess.run([GITMEM, 'now', 'add', '--did', 'd', '--human', 'nothing', '--next', 'n'], check=True, cwd=root)
with open(os.path.join(root, 'notes.txt'), 'w') as f:
    f.write('notes of the agent\\n')
try:
    with open(os.path.join(root, 'filler.bin'), 'wb') as f:
        while True:
            f.write(BLOCK())
            f.flush()
except OSError:
    pass
"""

INSIDE = """
import json, os, shutil, subprocess, sys
small, repo, gitmem, out = sys.argv[1:5]
subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=' + sys.argv[5], 'tmpfs', small], check=True)
shutil.copytree(repo, os.path.join(small, 'repo'), symlinks=True)
root = os.path.join(small, 'repo')
done = subprocess.run([gitmem, 'cycle', '--json'], cwd=root, capture_output=True, text=True, timeout=300)
def git(*args):
    return subprocess.run(['git', *args], cwd=root, capture_output=True, text=True).stdout
free = shutil.disk_usage(small).free
json.dump({'code': done.returncode, 'out': done.stdout, 'err': done.stderr, 'status': git('status', '--porcelain'),
           'branches': git('branch', '--format=%(refname:short)').split(),
           'log': open(os.path.join(root, 'LOG.md')).read(),
           'head': git('log', '-1', '--format=%s').strip(), 'free': free,
           'salvaged': git('ls-tree', '-r', '--name-only', 'gitmem/salvage/cycle-1').split(),
           'held': sorted(os.listdir(os.path.join(root, '.git', 'gitmem', 'held', 'cycle-1')))
                   if os.path.isdir(os.path.join(root, '.git', 'gitmem', 'held', 'cycle-1')) else [],
           'files': sorted(os.listdir(root))}, open(out, 'w'))
"""


def _cycle_on_a_small_disk(tmp_path: Path, repo: GitRepo, size: str) -> dict[str, object]:
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("this kernel refuses a user namespace")
    small, out, inside = tmp_path / "small", tmp_path / "inside.json", tmp_path / "inside.py"
    small.mkdir()
    inside.write_text(INSIDE)
    done = subprocess.run(["unshare", "-rm", sys.executable, str(inside), str(small), str(repo.path), str(GITMEM),
                           str(out), size], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(out.read_text())
    return found


def _agent(tmp_path: Path, repo: GitRepo, filler: str) -> None:
    block = "lambda: b'x' * 65536" if filler == "compressible" else "lambda: os.urandom(65536)"
    command_agent(tmp_path, repo, f"GITMEM = {str(GITMEM)!r}\nBLOCK = {block}\n" + FILL, write_memory=False)


def test_a_disk_too_full_to_finish_a_cycle_runs_no_agent(tmp_path: Path, memrepo: GitRepo) -> None:
    """A 3 MB disk has less than the room a cycle keeps for its own writes: the agent does not run, and the
    no-build entry that says why is committed."""
    _agent(tmp_path, memrepo, "compressible")
    found = _cycle_on_a_small_disk(tmp_path, memrepo, "3m")
    said = f"{found['err']}{found['out']}"
    assert "Traceback" not in said
    assert found["code"] == ExitCode.SALVAGED, said
    assert "GM725" in said and "the agent did not run" in said
    assert "notes.txt" not in found["files"] and found["status"] == ""
    assert "· no-build" in str(found["log"]).rsplit("## ", 1)[-1].splitlines()[0]


@pytest.mark.parametrize("filler", ["compressible", "random"])
def test_an_agent_that_fills_the_disk_gets_its_cycle_committed_and_loses_nothing(tmp_path: Path, memrepo: GitRepo,
                                                                                 filler: str) -> None:
    """The agent writes memory and a note, then fills a 24 MB disk with one file. The room kept before it ran is
    given back, so the runner restores git state and commits the cycle. A filler that does not compress is
    larger than the free space, so no commit could store it: it is held out like an oversize file (moved, which
    costs no space), and named. Never a traceback; nothing of the agent's lost."""
    _agent(tmp_path, memrepo, filler)
    found = _cycle_on_a_small_disk(tmp_path, memrepo, "24m")
    said = f"{found['err']}{found['out']}"
    assert "Traceback" not in said
    assert found["code"] == ExitCode.OK, said
    assert found["status"] == "" and str(found["head"]).startswith("gitmem: cycle 1 ")
    assert "notes.txt" in found["files"] and "filler.bin" not in found["files"]
    assert "the disk is full" in said and ".git/gitmem/held/cycle-1/filler.bin" in said     # moved, not deleted


def test_files_that_fit_one_by_one_but_not_together_go_the_salvage_way(tmp_path: Path, memrepo: GitRepo) -> None:
    """1 MB files that do not compress until a 24 MB disk is full: each fits the free space the room gives back,
    all of them do not. The cycle's commit fails for room (GM725, exit 4); the salvage holds out what no longer
    fits, saves the rest on its branch and commits the no-build entry. Nothing is lost, nothing half-written."""
    command_agent(tmp_path, memrepo, f"GITMEM = {str(GITMEM)!r}\nPARTS = {str(tmp_path / 'parts')!r}\n" + MANY,
                  write_memory=False)
    found = _cycle_on_a_small_disk(tmp_path, memrepo, "24m")
    said = f"{found['err']}{found['out']}"
    assert "Traceback" not in said
    assert found["code"] == ExitCode.SALVAGED, said
    assert "GM725" in said and "the disk is full" in said
    assert found["branches"] == ["gitmem/salvage/cycle-1", "main"] and found["status"] == ""
    assert found["head"] == "gitmem: cycle 1 · no-build · cycle run failed"
    assert "notes.txt" not in found["files"] and "notes.txt" in str(found["salvaged"])      # on the salvage branch
    parts = int((tmp_path / "parts").read_text())
    assert parts >= 5 and str(found["salvaged"]).count("part-") + str(found["held"]).count("part-") == parts
    assert not any(name.endswith((".scrub", ".tmp", ".lock")) for name in found["files"])


# Memory and a note, then 1 MB files that do not compress until the disk is full.
MANY = FILL.split("try:")[0] + """
n = 0
try:
    while True:
        with open(os.path.join(root, f'part-{n}.bin'), 'wb') as f:
            n += 1
            f.write(os.urandom(1 << 20))
except OSError:
    pass
with open(PARTS, 'w') as f:      # how many it made (the last one cut short), outside the small disk
    f.write(str(n))
"""


# The agent first frees the room the runner kept, wherever it finds it under `.git` (the box lets it write
# `.git/gitmem/`): it cuts it to nothing, which frees its blocks even while the runner holds it open, and
# removes it; then it fills the disk.
TAKE_ROOM = """
for folder, _dirs, names in os.walk(os.path.join(root, '.git')):
    for name in names:
        if 'room' in name:
            place = os.path.join(folder, name)
            try:
                open(place, 'wb').close()
            except OSError:
                pass
            try:
                os.remove(place)
            except OSError:
                pass
"""


@pytest.mark.parametrize("sandbox", ["none", "bubblewrap"])
def test_an_agent_that_frees_the_runners_room_first_still_gets_its_cycle_committed(tmp_path: Path,
                                                                                   memrepo: GitRepo,
                                                                                   sandbox: str) -> None:
    """The room is the runner's alone: a file with no name, held open, outside the `.git/gitmem/` the box lets
    the agent write. So the agent that tries to free it, then fills a 24 MB disk, still gets its cycle committed
    as in the test above, boxed or not. (On the old code the runner had no room: it held LOG.md itself out as
    larger than the free space, and left the work tree without it.)"""
    if sandbox == "bubblewrap" and subprocess.run(["unshare", "-rm", "bwrap", "--unshare-user", "--ro-bind", "/",
                                                   "/", "true"], capture_output=True).returncode:
        pytest.skip("bwrap cannot run in a user namespace here")
    body = f"GITMEM = {str(GITMEM)!r}\nBLOCK = lambda: b'x' * 65536\n" + TAKE_ROOM + FILL
    command_agent(tmp_path, memrepo, body, write_memory=False, sandbox=sandbox)
    found = _cycle_on_a_small_disk(tmp_path, memrepo, "24m")
    said = f"{found['err']}{found['out']}"
    assert "Traceback" not in said
    assert found["code"] == ExitCode.OK, said
    assert found["status"] == "" and str(found["head"]).startswith("gitmem: cycle 1 ")
    assert "notes.txt" in found["files"] and "filler.bin" not in found["files"]
    assert sandbox == "none" or "sandbox: bubblewrap" in str(found["log"])
