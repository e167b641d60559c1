"""Bytecode caches (gitmem.agents.bytecode): a git-ignored `__pycache__/*.pyc` the agent writes with its source's
size and mtime, or a sourceless `*.pyc`, would run the agent's code at the human's next import, outside any
box, with no diff. After the cycle the runner has removed them, with the real bwrap box and without it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem.agents import bytecode
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, no_traceback
from tests.support.nobody import NOBODY, bwrap_works, gitmem_as_nobody, nobody_env, nobody_place, runs_nobodys_venv

needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")
SOURCE = "VALUE = 'the human'\n"


def _forge(marker: Path) -> str:
    """The agent's script: compile code that leaves `marker`, and write it where Python imports it from."""
    return f'''
import importlib.util
import importlib._bootstrap_external as external
src = os.path.join(root, "mod.py")
st = os.stat(src)
code = compile("open({str(marker)!r}, 'w').write('the agent ran')", src, "exec")
data = bytes(external._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))
cache = importlib.util.cache_from_source(src)
os.makedirs(os.path.dirname(cache), exist_ok=True)
with open(cache, "wb") as handle:
    handle.write(data)
with open(os.path.join(root, "helper.pyc"), "wb") as handle:     # sourceless: imported as it is
    handle.write(data)
os.makedirs(os.path.join(root, "pkg"), exist_ok=True)
os.symlink("/tmp", os.path.join(root, "pkg", "__pycache__"))    # a link where a cache directory belongs
'''


def _humans_import(repo: GitRepo, module: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run([sys.executable, "-c", f"import {module}"], cwd=repo.path, env=env,
                          capture_output=True, text=True, timeout=60)


def _cycle_with_a_forged_cache(tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> dict[str, object]:
    memrepo.commit_files({"mod.py": SOURCE, "pkg/__init__.py": ""}, "the human's module")
    marker = tmp_path / "agent-ran"
    command_agent(tmp_path, memrepo, _forge(marker), sandbox=sandbox)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    for module in ("mod", "helper", "pkg"):
        _humans_import(memrepo, module)
    assert not marker.exists(), "the human's import ran the agent's bytecode"
    source = _humans_import(memrepo, "mod; print(mod.VALUE)")
    assert (source.returncode, source.stdout) == (0, "the human\n"), source.stderr     # the source the diff shows
    assert not (memrepo.path / "helper.pyc").exists() and not (memrepo.path / "pkg" / "__pycache__").is_symlink()
    said: dict[str, object] = json.loads(result.out)
    return said


def test_without_the_box_the_forged_cache_is_removed_and_the_import_runs_the_source(tmp_path: Path,
                                                                                   memrepo: GitRepo, cli) -> None:
    said = _cycle_with_a_forged_cache(tmp_path, memrepo, cli, "none")
    messages = [m for m in said["messages"] if "bytecode cache" in m]      # type: ignore[union-attr]
    assert len(messages) == 1 and "removed 4 bytecode cache entries" in messages[0], said["messages"]
    assert "helper.pyc" in messages[0] and "pkg/__pycache__" in messages[0]


@needs_bwrap
def test_inside_the_box_the_forged_cache_is_removed_too(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    said = _cycle_with_a_forged_cache(tmp_path, memrepo, cli, "bubblewrap")
    assert any("removed 4 bytecode cache entries" in m for m in said["messages"])   # type: ignore[union-attr]


BY_NAME = """
for argv in (["gitmem", "log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
"""      # the memory writes of an agent that cannot run this test's own gitmem: the one on PATH


@needs_bwrap
def test_inside_the_box_as_an_unprivileged_user_the_forged_cache_is_removed(git_env: None) -> None:
    with nobody_place("gitmem-bytecode-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        repo.commit_files({"mod.py": SOURCE, "pkg/__init__.py": ""}, "the human's module")
        marker = place / "agent-ran"
        command_agent(place, repo, _forge(marker) + BY_NAME, write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        env = nobody_env(place, bin_dir)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json", env=env)
        assert done.returncode == ExitCode.OK, done.stderr
        assert any("removed 4 bytecode cache entries" in m for m in json.loads(done.stdout)["messages"])
        for module in ("mod", "helper"):
            subprocess.run([*NOBODY, str(bin_dir / "python"), "-c", f"import {module}"], cwd=repo.path, env=env,
                           capture_output=True, timeout=60)
        assert not marker.exists(), "the human's import ran the agent's bytecode"


def test_only_caches_made_or_changed_during_the_cycle_are_found(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "pkg" / "__pycache__").mkdir(parents=True)
    old = root / "pkg" / "__pycache__" / "old.cpython-311.pyc"
    old.write_bytes(b"the human's")
    (root / ".venv" / "lib").mkdir(parents=True)
    (root / ".venv" / "lib" / "x.pyc").write_bytes(b"an anchor's: reported by gitmem.agents.ignored_tool_dirs")
    (root / "tmp" / "cache" / "bootsnap" / "compile-cache-iseq" / "ab").mkdir(parents=True)
    time.sleep(0.02)
    since = time.time_ns() - 1_000_000      # the kernel's ctime clock is coarse: a millisecond of slack
    time.sleep(0.02)
    new = root / "pkg" / "__pycache__" / "new.cpython-311.pyc"
    new.write_bytes(b"the agent's")
    (root / "tmp" / "cache" / "bootsnap" / "compile-cache-iseq" / "ab" / "cdef").write_bytes(b"iseq")
    (root / "notes.txt").write_text("not a cache")
    # An old cache put back with its old mtime is still found: the ctime moved.
    stamp = old.stat()
    old.write_bytes(b"the agent's too")
    os.utime(old, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    sweep = bytecode.fresh(root, since)
    # A cache directory an entry was added to counts whole (its own ctime moved): the human's old files there
    # go too, which costs a recompile; the anchor's and the plain file are not caches here.
    assert sorted(sweep.paths) == ["pkg/__pycache__", "pkg/__pycache__/new.cpython-311.pyc",
                                   "pkg/__pycache__/old.cpython-311.pyc", "tmp/cache/bootsnap/compile-cache-iseq/ab",
                                   "tmp/cache/bootsnap/compile-cache-iseq/ab/cdef"]
    assert not sweep.cut_short
    assert len(bytecode.remove_swept(root, sweep)) == 5
    assert not new.exists() and not old.exists() and (root / "notes.txt").exists()
    assert (root / ".venv" / "lib" / "x.pyc").exists() and (root / "tmp" / "cache" / "bootsnap").is_dir()


def test_caches_older_than_the_cycle_stay(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "pkg" / "__pycache__").mkdir(parents=True)
    (root / "pkg" / "__pycache__" / "old.cpython-311.pyc").write_bytes(b"the human's")
    (root / "legacy.pyc").write_bytes(b"the human's too")
    time.sleep(0.02)
    since = time.time_ns() - 1_000_000
    (root / "pkg" / "m.py").write_text("x = 1\n")        # a source the agent wrote is the diff's business
    assert bytecode.fresh(root, since).paths == []


def test_a_cache_directory_made_during_the_cycle_goes_whole(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "made").mkdir(parents=True)
    (root / "made" / "m.cpython-311.pyc").write_bytes(b"made before")
    time.sleep(0.02)
    since = time.time_ns() - 1_000_000
    time.sleep(0.02)
    os.rename(root / "made", root / "__pycache__")     # a rename keeps the files' ctimes, not the directory's
    sweep = bytecode.fresh(root, since)
    assert sorted(sweep.paths) == ["__pycache__", "__pycache__/m.cpython-311.pyc"]
    assert sorted(bytecode.remove_swept(root, sweep)) == ["__pycache__", "__pycache__/m.cpython-311.pyc"]
    assert not (root / "__pycache__").exists()


def test_the_walk_is_bounded_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(20):
        (tmp_path / f"f{n}").write_text("x")
    monkeypatch.setattr(bytecode, "MAX_ENTRIES", 10)
    sweep = bytecode.fresh(tmp_path, 0)
    assert sweep.cut_short
    assert "were not looked at" in bytecode.removal_note([], sweep.cut_short)


def test_a_tree_too_big_to_walk_is_said_in_evidence(tmp_path: Path, memrepo: GitRepo, cli,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.hostile import evidence

    monkeypatch.setattr(bytecode, "MAX_ENTRIES", 5)
    command_agent(tmp_path, memrepo, "", sandbox="none")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert "bytecode caches past them were not looked at" in evidence(memrepo)
