"""The work tree's trust anchors (`.venv`, `venv`, `.direnv`; gitmem.agents.ignored_tool_dirs): git-ignored places the
human's own tools run code from. Inside the real bwrap box they are read-only, present or not; without the box
a cycle that changes them says so in Evidence, in its output and in `gitmem status`."""
from __future__ import annotations

import json
import os

import pytest

from gitmem.agents.ignored_tool_dirs import NOTE_PREFIX
from gitmem.agents.tools import Toolbox
from gitmem.errors import ExitCode
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, evidence, no_traceback
from tests.support.nobody import bwrap_works, gitmem_as_nobody, nobody_place, runs_nobodys_venv

needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")
HUMANS = "#!/bin/sh\necho the human's gitmem\n"

# What the agent tries, as facts: each write's strerror, or "done".
ATTEMPTS = r'''
import json
said = {}
def attempt(name, action):
    try:
        action()
        said[name] = "done"
    except OSError as err:
        said[name] = err.strerror
j = lambda rel: os.path.join(root, rel)
'''
ATTACK = ATTEMPTS + r'''
attempt("edit", lambda: open(j(".venv/bin/gitmem"), "a").write("echo planted\n"))
attempt("add", lambda: open(j(".venv/bin/python3"), "w").write("planted"))
attempt("move", lambda: os.rename(j(".venv"), j("old-venv")))
attempt("create_venv", lambda: os.makedirs(j("venv/bin")))
attempt("create_direnv", lambda: os.makedirs(j(".direnv/python-3/bin")))
with open(j("said.json"), "w") as handle:
    json.dump(said, handle)
'''
BY_NAME = '''
for argv in (["gitmem", "log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
'''      # the memory writes of an agent that cannot run this test's own gitmem: the one on PATH


def _humans_venv(repo: GitRepo) -> None:
    """The venv the human made: git-ignored (the template's .gitignore), with its `gitmem` script."""
    script = repo.path / ".venv" / "bin" / "gitmem"
    script.parent.mkdir(parents=True)
    script.write_text(HUMANS)
    script.chmod(0o755)


def _assert_held(root: os.PathLike[str], said: dict[str, str]) -> None:
    assert set(said.values()) <= {"Read-only file system", "Device or resource busy"}, said
    place = os.fspath(root)
    assert open(os.path.join(place, ".venv/bin/gitmem")).read() == HUMANS
    assert sorted(os.listdir(os.path.join(place, ".venv/bin"))) == ["gitmem"]
    # The read-only placeholders of the absent ones are gone again: nothing is left for a later session.
    assert not os.path.lexists(os.path.join(place, "venv")) and not os.path.lexists(os.path.join(place, ".direnv"))


@needs_bwrap
def test_inside_the_box_the_venv_is_read_only_and_no_anchor_can_be_created(tmp_path, memrepo: GitRepo,
                                                                           cli) -> None:
    _humans_venv(memrepo)
    command_agent(tmp_path, memrepo, ATTACK, sandbox="bubblewrap")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _assert_held(memrepo.path, json.loads(memrepo.read("said.json")))
    assert NOTE_PREFIX not in evidence(memrepo) and "GM719" not in result.out


@needs_bwrap
def test_inside_the_box_the_anchors_hold_for_an_unprivileged_user_too(git_env: None) -> None:
    with nobody_place("gitmem-anchors-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        _humans_venv(repo)
        command_agent(place, repo, ATTACK + BY_NAME, write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json")
        assert done.returncode == ExitCode.OK, done.stderr
        _assert_held(repo.path, json.loads((repo.path / "said.json").read_text()))
        assert NOTE_PREFIX not in evidence(repo)


def test_without_the_box_a_changed_venv_is_reported_even_with_its_mtime_put_back(tmp_path, memrepo: GitRepo,
                                                                                 cli) -> None:
    _humans_venv(memrepo)
    # Same size, same mtime: only the ctime (which no user can set) tells the planted script from the human's.
    body = ("p = os.path.join(root, '.venv/bin/gitmem'); st = os.stat(p)\n"
            "open(p, 'w').write(open(p).read().replace('human', 'agent'))\n"
            "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
            "os.makedirs(os.path.join(root, '.direnv/bin'))\n")
    command_agent(tmp_path, memrepo, body, sandbox="none")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    said = json.loads(result.out)
    found = [v for v in said["violations"] if v["code"] == "GM719"]
    assert [(v["path"], v["severity"]) for v in found] == [(".venv", "warning")]
    assert any(NOTE_PREFIX in message and ".direnv/ (created)" in message for message in said["messages"])
    assert f"runner: {NOTE_PREFIX}: .venv/, .direnv/ (created) changed during the cycle" in evidence(memrepo)
    status = cli(["status"], cwd=memrepo.path)
    assert f"  warning: {NOTE_PREFIX}: .venv/, .direnv/ (created)" in status.out
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert data["last_cycle"]["warnings"][0].startswith(f"{NOTE_PREFIX}: .venv/, .direnv/ (created)")


def test_without_the_box_an_untouched_venv_says_nothing(tmp_path, memrepo: GitRepo, cli) -> None:
    _humans_venv(memrepo)
    command_agent(tmp_path, memrepo, "os.listdir(os.path.join(root, '.venv/bin'))", sandbox="none")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert NOTE_PREFIX not in evidence(memrepo) and "GM719" not in result.out
    assert json.loads(cli(["status", "--json"], cwd=memrepo.path).out)["last_cycle"]["warnings"] == []


@pytest.mark.parametrize("path", [".venv/bin/gitmem", "./.venv/bin/python3", "VENV/bin/activate", ".direnv/x"])
def test_the_in_process_file_tools_never_write_an_anchor(memrepo: GitRepo, path: str) -> None:
    _humans_venv(memrepo)
    box = Toolbox(Workspace.at(memrepo.path), cycle=1)
    wrote = box.call("write_file", {"path": path, "content": "echo planted\n"})
    edited = box.call("edit_file", {"path": ".venv/bin/gitmem", "old_text": "human", "new_text": "agent"})
    assert wrote.is_error and edited.is_error and "the agent never writes it" in wrote.text
    assert (memrepo.path / ".venv/bin/gitmem").read_text() == HUMANS
    assert sorted(p.name for p in memrepo.path.iterdir() if "venv" in p.name.lower()) == [".venv"]


# `.env`: git-ignored (the template's .gitignore), and loaded into the environment of what the human runs next
# by direnv's `dotenv`, pipenv, bun, docker compose and VS Code's Python extension: an `LD_PRELOAD`, `PATH` or
# `NODE_OPTIONS` there runs the agent's code with the human's rights, and no diff shows it.
HUMANS_ENV = "DATABASE_URL=postgres://localhost/dev\n"
ENV_ATTACK = ATTEMPTS + r'''
attempt("append", lambda: open(j(".env"), "a").write("LD_PRELOAD=/tmp/evil.so\n"))
attempt("replace", lambda: os.rename(j("planted.env"), j(".env")))
attempt("remove", lambda: os.unlink(j(".env")))
said["read"] = open(j(".env")).read()       # the project's own tools (python-dotenv) still read it
with open(j("said.json"), "w") as handle:
    json.dump(said, handle)
'''


@needs_bwrap
@pytest.mark.parametrize("present", [True, False], ids=["the human's .env", "no .env"])
def test_inside_the_box_the_env_file_is_read_only_present_or_not(tmp_path, memrepo: GitRepo, cli,
                                                                  present: bool) -> None:
    if present:
        (memrepo.path / ".env").write_text(HUMANS_ENV, encoding="utf-8")
    (memrepo.path / "planted.env").write_text("PATH=/tmp/evil:/usr/bin\n", encoding="utf-8")
    memrepo.commit_files({"planted.env": "PATH=/tmp/evil:/usr/bin\n"}, "a file the agent will try to move")
    command_agent(tmp_path, memrepo, ENV_ATTACK, sandbox="bubblewrap")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    said = json.loads(memrepo.read("said.json"))
    assert said["append"] == "Read-only file system" and said["replace"] != "done", said
    assert said["remove"] != "done" and said["read"] == (HUMANS_ENV if present else ""), said
    if present:
        assert (memrepo.path / ".env").read_text(encoding="utf-8") == HUMANS_ENV
    else:             # the read-only empty placeholder is gone again after the cycle
        assert not os.path.lexists(memrepo.path / ".env")
    assert NOTE_PREFIX not in evidence(memrepo) and "GM719" not in result.out


def test_without_the_box_an_env_file_the_agent_writes_is_reported(tmp_path, memrepo: GitRepo, cli) -> None:
    command_agent(tmp_path, memrepo, "open(os.path.join(root, '.env'), 'w').write('LD_PRELOAD=/tmp/evil.so\\n')\n",
                  sandbox="none")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    found = [v for v in json.loads(result.out)["violations"] if v["code"] == "GM719"]
    assert [(v["path"], v["severity"]) for v in found] == [(".env", "warning")]
    assert f"runner: {NOTE_PREFIX}: .env (created) changed during the cycle" in evidence(memrepo)


@pytest.mark.parametrize("path", [".env", "./.env", ".ENV"])
def test_the_in_process_file_tools_never_write_the_env_file(memrepo: GitRepo, path: str) -> None:
    box = Toolbox(Workspace.at(memrepo.path), cycle=1)
    wrote = box.call("write_file", {"path": path, "content": "LD_PRELOAD=/tmp/evil.so\n"})
    assert wrote.is_error and "the agent never writes it" in wrote.text
    assert not os.path.lexists(memrepo.path / ".env")


@needs_bwrap
def test_inside_the_box_the_env_file_holds_for_an_unprivileged_user_too(git_env: None) -> None:
    with nobody_place("gitmem-dotenv-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        repo.commit_files({"planted.env": "PATH=/tmp/evil:/usr/bin\n"}, "a file the agent will try to move")
        command_agent(place, repo, ENV_ATTACK + BY_NAME, write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json")
        assert done.returncode == ExitCode.OK, done.stderr
        said = json.loads((repo.path / "said.json").read_text())
        # (the placeholder is root's file, shared read-only with `nobody`: refused before the mount says so)
        assert said["append"] in ("Read-only file system", "Permission denied") and said["read"] == "", said
        assert said["replace"] != "done" and said["remove"] != "done", said
        assert not os.path.lexists(repo.path / ".env")
        assert NOTE_PREFIX not in evidence(repo)


# The rest of the `.env` family: bun, Next.js, Vite and dotenv-flow load `.env.local`, `.env.<mode>` and
# `.env.<mode>.local` as they load `.env`, for a mode any script may name.
HUMANS_LOCAL = "API_URL=http://localhost:8080\n"
FAMILY_ATTACK = ATTEMPTS + r'''
attempt("append_local", lambda: open(j(".env.local"), "a").write("NODE_OPTIONS=--require /tmp/evil.js\n"))
attempt("create_development", lambda: open(j(".env.development"), "w").write("LD_PRELOAD=/tmp/evil.so\n"))
attempt("create_production_local", lambda: open(j(".env.production.local"), "w").write("PATH=/tmp/evil\n"))
attempt("append_staging", lambda: open(j(".env.staging"), "a").write("LD_PRELOAD=/tmp/evil.so\n"))
said["read_local"] = open(j(".env.local")).read()
with open(j("said.json"), "w") as handle:
    json.dump(said, handle)
'''


def _ignores_env_files(repo: GitRepo) -> None:
    """The human's .gitignore keeps every env file out of git, as the template's keeps `.env`."""
    repo.commit_files({".gitignore": repo.read(".gitignore") + ".env.*\n"}, "ignore the env files")


@needs_bwrap
def test_inside_the_box_every_env_file_is_read_only_and_the_default_ones_cannot_be_created(tmp_path, memrepo: GitRepo,
                                                                                         cli) -> None:
    _ignores_env_files(memrepo)
    (memrepo.path / ".env.local").write_text(HUMANS_LOCAL, encoding="utf-8")
    (memrepo.path / ".env.staging").write_text(HUMANS_ENV, encoding="utf-8")     # a mode of the human's naming
    command_agent(tmp_path, memrepo, FAMILY_ATTACK, sandbox="bubblewrap")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    said = json.loads(memrepo.read("said.json"))
    assert said["read_local"] == HUMANS_LOCAL, said
    assert {name: said[name] for name in ("append_local", "create_development", "create_production_local",
                                          "append_staging")} == dict.fromkeys(
        ("append_local", "create_development", "create_production_local", "append_staging"), "Read-only file system")
    assert (memrepo.path / ".env.local").read_text(encoding="utf-8") == HUMANS_LOCAL
    assert (memrepo.path / ".env.staging").read_text(encoding="utf-8") == HUMANS_ENV
    assert sorted(p.name for p in memrepo.path.iterdir() if p.name.startswith(".env")) == [".env.local",
                                                                                           ".env.staging"]
    assert NOTE_PREFIX not in evidence(memrepo) and "GM719" not in result.out


@needs_bwrap
def test_inside_the_box_an_env_file_of_a_new_mode_is_reported(tmp_path, memrepo: GitRepo, cli) -> None:
    # No mount point can stand ready for every mode's name: the one the agent makes is the human's to hear of.
    _ignores_env_files(memrepo)
    command_agent(tmp_path, memrepo, "open(os.path.join(root, '.env.ci'), 'w').write('LD_PRELOAD=/tmp/e.so\\n')\n",
                  sandbox="bubblewrap")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    found = [v for v in json.loads(result.out)["violations"] if v["code"] == "GM719"]
    assert [(v["path"], v["severity"]) for v in found] == [(".env.ci", "warning")]
    assert f"runner: {NOTE_PREFIX}: .env.ci (created) changed during the cycle" in evidence(memrepo)


def test_without_the_box_every_env_file_the_agent_writes_is_reported(tmp_path, memrepo: GitRepo, cli) -> None:
    _ignores_env_files(memrepo)
    (memrepo.path / ".env.staging").write_text(HUMANS_ENV, encoding="utf-8")
    body = ("open(os.path.join(root, '.env.local'), 'w').write('NODE_OPTIONS=--require /tmp/evil.js\\n')\n"
            "open(os.path.join(root, '.env.staging'), 'a').write('LD_PRELOAD=/tmp/evil.so\\n')\n"
            "open(os.path.join(root, '.env.preview.local'), 'w').write('PATH=/tmp/evil\\n')\n")
    command_agent(tmp_path, memrepo, body, sandbox="none")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    found = [v for v in json.loads(result.out)["violations"] if v["code"] == "GM719"]
    assert [(v["path"], v["severity"]) for v in found] == [(".env.local", "warning")]
    assert (f"runner: {NOTE_PREFIX}: .env.local (created), .env.preview.local (created), .env.staging changed "
            "during the cycle") in evidence(memrepo)


@pytest.mark.parametrize("path", [".env.local", "./.env.development", ".env.production.local", ".ENV.Staging"])
def test_the_in_process_file_tools_never_write_an_env_file(memrepo: GitRepo, path: str) -> None:
    box = Toolbox(Workspace.at(memrepo.path), cycle=1)
    wrote = box.call("write_file", {"path": path, "content": "LD_PRELOAD=/tmp/evil.so\n"})
    assert wrote.is_error and "the agent never writes it" in wrote.text
    assert not [p.name for p in memrepo.path.iterdir() if p.name.casefold().startswith(".env")]
