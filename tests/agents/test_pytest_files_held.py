"""Files pytest runs by their name (gitmem.agents.bytecode `RunByName`): pytest reads no .gitignore, so a
`conftest.py` or `test_*.py` the agent plants in a git-ignored folder would run at the human's next `pytest`, with
no diff to review. After the cycle the runner has held them in .git/gitmem/held/ (GM776), with the real bwrap box
and without it; the human's real pytest then runs none of them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo, with_command_backend
from tests.support.hostile import command_agent, evidence, no_traceback
from tests.support.nobody import bwrap_works, gitmem_as_nobody, nobody_env, nobody_place, runs_nobodys_venv

needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")
HUMANS_CONFTEST = "# the human's own, from before the cycle\n"


def _plant(marker: Path) -> str:
    """The agent's script: files pytest imports, each leaving `marker` when it runs, in the places it collects
    from and in places it never looks."""
    body = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
    return f'''
def put(rel, text={body!r}):
    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
    open(os.path.join(root, rel), "w").write(text)
put("scratch/conftest.py")                   # git-ignored, collected: held
put("scratch/deep/test_planted.py")          # git-ignored, collected: held
put("scratch/deep/planted_test.py")          # git-ignored, collected: held
put("checks/conftest.py")                    # not ignored: in the cycle's commit, for the human to review
put("node_modules/pkg/test_pkg.py")          # pytest never recurses into node_modules: left alone
put("scratch/.hidden/conftest.py")           # nor into a dot folder
put("scratch/env/pyvenv.cfg", "home = /usr/bin")                  # nor into a virtualenv the agent made,
put("scratch/env/lib/python3/site-packages/pkg/test_pkg.py")     # where packages bring their own tests
put("scratch/notes.py")                      # not a name pytest imports
'''


def _cycle_held(cli, memrepo: GitRepo) -> tuple[dict, list[str]]:
    """A cycle run to its end (exit 0), as `--json` says it, and the paths it held as files pytest runs (GM776)."""
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    said = json.loads(result.out)
    return said, sorted(v["path"] for v in said["violations"] if v["code"] == "GM776")


def _cycle(tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> tuple[dict, Path]:
    memrepo.commit_files({".gitignore": memrepo.read(".gitignore") + "scratch/\nnode_modules/\n"},
                         "ignore the scratch folder")
    (memrepo.path / "scratch" / "keep").mkdir(parents=True)
    (memrepo.path / "scratch" / "keep" / "conftest.py").write_text(HUMANS_CONFTEST, encoding="utf-8")
    marker = tmp_path / "pytest-ran"
    command_agent(tmp_path, memrepo, _plant(marker), sandbox=sandbox)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    return json.loads(result.out), marker


def _assert_held(memrepo: GitRepo, said: dict, marker: Path) -> None:
    planted = ["scratch/conftest.py", "scratch/deep/planted_test.py", "scratch/deep/test_planted.py"]
    found = [(v["path"], v["severity"]) for v in said["violations"] if v["code"] == "GM776"]
    assert sorted(found) == [(path, "warning") for path in planted]
    cycle = said["cycle"]
    for path in planted:
        assert not os.path.lexists(memrepo.path / path)
        kept = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{cycle}" / f"{path}.held"
        assert "pytest-ran" in kept.read_text(encoding="utf-8")         # held, not lost
        assert f"kept {path} out of the work tree: pytest runs a file of that name" in evidence(memrepo)
    # The human's own ignored conftest.py, from before the cycle, and what pytest never collects, stay.
    assert (memrepo.path / "scratch/keep/conftest.py").read_text(encoding="utf-8") == HUMANS_CONFTEST
    for path in ("node_modules/pkg/test_pkg.py", "scratch/.hidden/conftest.py", "scratch/notes.py",
                 "scratch/env/lib/python3/site-packages/pkg/test_pkg.py"):
        assert (memrepo.path / path).is_file(), path
    # Not ignored: the commit carries it, where the human reviews it.
    assert "checks/conftest.py" in git(memrepo.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    # The human's next real pytest over the tree runs none of what the agent planted.
    (memrepo.path / "checks" / "conftest.py").unlink()           # (reviewed and thrown away)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
                    "--rootdir", str(memrepo.path), str(memrepo.path)], cwd=memrepo.path, env=env,
                   capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text(encoding="utf-8")


def test_without_the_box_files_pytest_runs_planted_in_ignored_folders_are_held(tmp_path, memrepo: GitRepo,
                                                                                 cli) -> None:
    said, marker = _cycle(tmp_path, memrepo, cli, "none")
    _assert_held(memrepo, said, marker)


@needs_bwrap
def test_inside_the_box_files_pytest_runs_planted_in_ignored_folders_are_held(tmp_path, memrepo: GitRepo,
                                                                                cli) -> None:
    said, marker = _cycle(tmp_path, memrepo, cli, "bubblewrap")
    _assert_held(memrepo, said, marker)



# -- a project's own norecursedirs (gitmem.agents.pytest_settings) -------------------------------------------

PROJECT_SETTINGS = "[pytest]\nnorecursedirs = docs\n"     # replaces pytest's default list: build/ is collected


def _plant_in_build(marker: Path, settings: str | None) -> str:
    """The agent's script: a conftest.py in the git-ignored build/ and in a dot folder, which pytest collects from
    under the project's settings; with `settings`, it rewrites the project's pytest.ini first."""
    body = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
    rewrite = "" if settings is None else f"open(os.path.join(root, 'pytest.ini'), 'w').write({settings!r})\n"
    return rewrite + f'''
for rel in ("build/lib/conftest.py", ".scratch/conftest.py"):
    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
    open(os.path.join(root, rel), "w").write({body!r})
'''


@pytest.mark.parametrize("settings", [None, "[pytest]\nnorecursedirs = build .* node_modules\n"],
                         ids=["the project's settings", "the agent rewrote them"])
def test_files_pytest_runs_where_the_projects_own_norecursedirs_sends_it_are_held(tmp_path, memrepo: GitRepo, cli,
                                                                                   settings: str | None) -> None:
    """A project's `norecursedirs` replaces pytest's default: pytest then imports a conftest.py in build/ or a dot
    folder, which the runner's look, knowing the default only, left in place to run at the human's next pytest.
    Rewriting the project's settings does not hide one: the start commit's are read too."""
    memrepo.commit_files({".gitignore": memrepo.read(".gitignore") + "build/\n.scratch/\n",
                          "pytest.ini": PROJECT_SETTINGS}, "the project's pytest settings")
    marker = tmp_path / "pytest-ran"
    command_agent(tmp_path, memrepo, _plant_in_build(marker, settings))
    said, found = _cycle_held(cli, memrepo)
    assert found == [".scratch/conftest.py", "build/lib/conftest.py"]
    for path in found:
        assert not os.path.lexists(memrepo.path / path)
    # The human's next real pytest, with the project's settings, runs none of them: not where they were, nor
    # where they are held (those settings send pytest into .git/ too).
    assert sorted(path.relative_to(memrepo.path / ".git").as_posix() for path in
                  (memrepo.path / ".git" / "gitmem" / "held").rglob("*") if path.is_file()) == [
        f"gitmem/held/cycle-{said['cycle']}/{path}.held" for path in found]
    (memrepo.path / "pytest.ini").write_text(PROJECT_SETTINGS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(memrepo.path)],
                   cwd=memrepo.path, env=env, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text(encoding="utf-8")


# -- a project's own python_files, and pytest's doctest files ------------------------------------------------

def _plant_by_name(marker: Path) -> str:
    """The agent's script: in the git-ignored scratch/, a module the project's python_files names and a doctest
    file by pytest's default glob, each leaving `marker` when pytest runs it."""
    module = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
    doctest = f">>> _ = open({str(marker)!r}, 'a').write('doctest ran\\n')\n"
    return f'''
os.makedirs(os.path.join(root, "scratch"), exist_ok=True)
open(os.path.join(root, "scratch", "check_evil.py"), "w").write({module!r})
open(os.path.join(root, "scratch", "test_notes.txt"), "w").write({doctest!r})
'''


@pytest.mark.parametrize("settings_file", ["setup.cfg", "pyproject.toml"])
def test_files_pytest_runs_by_the_projects_python_files_or_as_doctests_are_held(tmp_path, memrepo: GitRepo, cli,
                                                                              settings_file: str) -> None:
    """A project's `python_files = check_*.py` makes pytest import `check_evil.py`, and pytest runs the `>>>` lines of
    a `test*.txt` by default: the sweep knew pytest's default module names only, so either, planted in a git-ignored
    folder, ran at the human's next pytest with no diff to show it."""
    settings = {"setup.cfg": "[tool:pytest]\npython_files = check_*.py\n",
                "pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'}[settings_file]
    memrepo.commit_files({".gitignore": memrepo.read(".gitignore") + "scratch/\n", settings_file: settings},
                         "the project's pytest settings")
    marker = tmp_path / "pytest-ran"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    command_agent(tmp_path, memrepo, _plant_by_name(marker))
    said, found = _cycle_held(cli, memrepo)
    assert found == ["scratch/check_evil.py", "scratch/test_notes.txt"]
    for path in found:
        assert not os.path.lexists(memrepo.path / path)
        kept = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{said['cycle']}" / f"{path}.held"
        assert "pytest-ran" in kept.read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(memrepo.path)],
                          cwd=memrepo.path, env=env, capture_output=True, text=True, timeout=120)
    assert "no tests ran" in done.stdout, done.stdout
    assert not marker.exists(), marker.read_text(encoding="utf-8")


# -- what the runner holds for other reasons, where such settings send pytest too ----------------------------

def _plant_held_for_other_reasons(marker: Path) -> str:
    """The agent's script: a test module over cycle.max_file_bytes, a repository of its own holding a conftest.py,
    and a conftest.py at the bottom of folders nested past what libgit2 lists: each is held whole, in .git/."""
    body = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
    return f'''
def put(rel, text={body!r}):
    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
    open(os.path.join(root, rel), "w").write(text)
put("big/test_big.py", {body!r} + "# padding\\n" * 400)
put("sub/conftest.py")
subprocess.run(["git", "init", "-q", os.path.join(root, "sub")], check=True)
put("deep/" + "d/" * 120 + "conftest.py")
'''


def test_what_is_held_for_its_size_nesting_or_repository_keeps_no_name_pytest_runs(tmp_path, memrepo: GitRepo,
                                                                                   cli) -> None:
    """A project's norecursedirs without `.*` sends pytest into .git/, where the runner kept an oversize test module,
    a repository the agent made and a folder nested too deep under their own names: the human's next pytest
    imported the test module and both conftest.py there."""
    limit = memrepo.read("gitmem.yaml").replace("\ncycle:\n", "\ncycle:\n  max_file_bytes: 2048\n")
    memrepo.commit_files({"pytest.ini": PROJECT_SETTINGS, "gitmem.yaml": limit},
                         "the project's pytest settings, and a small file limit")
    marker = tmp_path / "pytest-ran"
    command_agent(tmp_path, memrepo, _plant_held_for_other_reasons(marker))
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    said = json.loads(result.out)
    too_deep = "deep" + "/d" * 99            # the folder 100 levels down is held, whole
    assert sorted((v["code"], v["path"]) for v in said["violations"] if v["code"] != "GM719") == [
        ("GM714", "big/test_big.py"), ("GM720", "sub"), ("GM775", too_deep)]
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{said['cycle']}"
    kept = sorted(path.relative_to(held).as_posix() for path in held.rglob("*") if path.is_file()
                  and path.name.startswith(("test_big", "conftest")))
    assert kept == ["big/test_big.py.held", "deep" + "/d" * 120 + "/conftest.py.held", "sub/conftest.py.held"]
    assert "is kept as <name>.held" in evidence(memrepo)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(memrepo.path)],
                          cwd=memrepo.path, env=env, capture_output=True, text=True, timeout=120)
    assert "no tests ran" in done.stdout, done.stdout
    assert not marker.exists(), marker.read_text(encoding="utf-8")


# -- .git/gitmem, which the box leaves writable ------------------------------------------------------------------

IMPORTLIB_SETTINGS = "[pytest]\nnorecursedirs = docs\naddopts = --import-mode=importlib\n"
SH_PLANTER = """#!/bin/sh
cat > /dev/null
mkdir -p .git/gitmem/deep
for rel in conftest.py deep/conftest.py evil_test.py; do
  printf 'open("%s", "a").write(__file__ + "\\\\n")\\n' "$MARKER" > ".git/gitmem/$rel"
done
gitmem log add --task "sh planter" --outcome built --result "planted in .git/gitmem"
gitmem now add --did "sh planter" --human nothing --next more
"""


@needs_bwrap
def test_files_pytest_runs_that_a_boxed_agent_plants_in_the_git_directorys_gitmem_folder_run_nothing(
        memrepo: GitRepo, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The box leaves `.git/gitmem` writable, and a project's norecursedirs without `.*` sends pytest into `.git/`:
    what the agent plants there the runner removes as it puts `.git/gitmem` back (it did), but the copy it keeps of
    the agent's version for the human to read was a module pytest imports: `.git__gitmem__evil_test.py` matches
    `*_test.py`, and pytest's importlib mode (a common addopts) ran it."""
    memrepo.commit_files({"pytest.ini": IMPORTLIB_SETTINGS}, "the project's pytest settings")
    script = tmp_path / "planter.sh"
    script.write_text(SH_PLANTER, encoding="utf-8")
    script.chmod(0o755)
    text = with_command_backend(memrepo.read("gitmem.yaml"), str(script), sandbox="bubblewrap").replace(
        "  pass_env:\n    - ANTHROPIC_API_KEY\n", "  pass_env:\n    - MARKER\n")
    memrepo.commit_files({"gitmem.yaml": text}, "a shell agent that plants")
    marker = tmp_path / "pytest-ran"
    monkeypatch.setenv("MARKER", str(marker))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert "Task: sh planter" in memrepo.read("LOG.md")
    state = memrepo.path / ".git" / "gitmem"
    assert not [path for path in ("conftest.py", "deep/conftest.py", "evil_test.py") if (state / path).exists()]
    kept = sorted(path.name for path in (state / "guard").rglob("*") if path.is_file())
    assert kept == [".git__gitmem__conftest.py.held", ".git__gitmem__evil_test.py.held"]     # (deep/: removed whole)
    assert "pytest-ran" in (state / "guard" / "cycle-1" / ".git__gitmem__evil_test.py.held").read_text(
        encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(memrepo.path)],
                   cwd=memrepo.path, env=env, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text(encoding="utf-8")


def test_files_pytest_runs_where_the_projects_testpaths_start_it_are_held(tmp_path, memrepo: GitRepo, cli) -> None:
    """`testpaths = build/gen` starts pytest in a git-ignored build/ that pytest's default norecursedirs leaves out:
    the conftest.py the agent planted on the way and the module it planted there ran at the human's next pytest."""
    memrepo.commit_files({".gitignore": memrepo.read(".gitignore") + "build/\n",
                          "pytest.ini": "[pytest]\ntestpaths = build/gen\n"}, "the project's pytest settings")
    marker = tmp_path / "pytest-ran"
    body = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
    command_agent(tmp_path, memrepo, f'''
for rel in ("build/conftest.py", "build/gen/generated.py"):
    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
    open(os.path.join(root, rel), "w").write({body!r})
open(os.path.join(root, "build", "notes.rst"), "w").write(">>> _ = open({str(marker)!r}, 'a').write('doctest')\\n")
open(os.path.join(root, "pytest.ini"), "w").write("[pytest]\\ntestpaths = build/gen/generated.py build/notes.rst\\n")
''')
    said, found = _cycle_held(cli, memrepo)
    assert found == ["build/conftest.py", "build/gen/generated.py", "build/notes.rst"]
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{said['cycle']}" / "build"
    assert sorted(path.name for path in held.rglob("*") if path.is_file()) == [
        "conftest.py.held", "generated.py.held", "notes.rst.held"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=memrepo.path, env=env,
                   capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text(encoding="utf-8")


# -- a folder the agent makes read-only ------------------------------------------------------------------------

MEMORY_BY_PATH = """
for argv in (["gitmem", "log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
"""      # the memory writes of an agent that cannot run this test's own gitmem: the one on PATH


@needs_bwrap
def test_a_file_pytest_runs_in_a_folder_the_agent_made_read_only_is_held_too(git_env: None) -> None:
    """As an unprivileged runner (no mode stops root): the agent plants scratch/conftest.py and makes scratch/
    read-only, so moving the file out failed (Permission denied) and the cycle ended in a traceback."""
    with nobody_place("gitmem-pytest-held-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        repo.commit_files({".gitignore": repo.read(".gitignore") + "scratch/\n"}, "ignore the scratch folder")
        plant = ('os.makedirs(os.path.join(root, "scratch"))\n'
                 'open(os.path.join(root, "scratch", "conftest.py"), "w").write("raise SystemExit(3)\\n")\n'
                 'os.chmod(os.path.join(root, "scratch"), 0o555)\n')
        command_agent(place, repo, plant + MEMORY_BY_PATH, write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json", env=nobody_env(place, bin_dir))
        assert done.returncode == ExitCode.OK, done.stderr
        said = json.loads(done.stdout)
        assert [v["path"] for v in said["violations"] if v["code"] == "GM776"] == ["scratch/conftest.py"]
        assert not os.path.lexists(repo.path / "scratch" / "conftest.py")
        assert (repo.path / "scratch").stat().st_mode & 0o777 == 0o555        # the agent's mode, as it left it
