"""A newcomer's first hour with `gitmem init`: .gitignore, plain git hooks, the next step, mapped file names."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import gitmem.scaffold.init as gitmem_init
from gitmem.cli import main
from gitmem.errors import ExitCode
from gitmem.scaffold.next_step import next_step
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import HUMAN

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_GITIGNORE = PROJECT_ROOT / "template-repo" / ".gitignore"
SPANISH = """\
files:
  now: ESTADO.md
  decisions: DECISIONES.md
  log: BITACORA.md
  lessons: LECCIONES.md
  rules: CLAUDE.md
"""


@pytest.fixture(autouse=True)
def _clean_git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ignore_patterns(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


# -- .gitignore --------------------------------------------------------------------------------------------

def test_the_template_ignores_the_usual_local_clutter() -> None:
    patterns = ignore_patterns(TEMPLATE_GITIGNORE)
    for must in (".venv/", "__pycache__/", ".env"):
        assert must in patterns
    # Memory, config, prompts and workflows are never ignored.
    for kept in ("NOW.md", "LOG.md", "gitmem.yaml", "prompts/", ".github/", ".pre-commit-config.yaml"):
        assert not any(kept.startswith(p.rstrip("/")) for p in patterns), kept


def test_following_the_template_readme_stages_no_venv(tmp_path: Path) -> None:
    """The template README's steps: `python3 -m venv .venv`, then `git add -A`. Nothing from .venv is staged."""
    agent = tmp_path / "agent"
    gitmem_init.init(agent)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(agent / ".venv")], check=True)
    # .env.local and .env.<mode> hold secrets as .env does (bun, Next.js, Vite and dotenv-flow load them); an
    # example file is meant to be shared.
    for name in (".env", ".env.local", ".env.production"):
        (agent / name).write_text("ANTHROPIC_API_KEY=not-a-real-key\n", encoding="utf-8")
    (agent / ".env.example").write_text("ANTHROPIC_API_KEY=\n", encoding="utf-8")
    (agent / "tools" / "__pycache__").mkdir(parents=True)
    (agent / "tools" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    git(agent, "add", "-A")
    staged = git(agent, "diff", "--cached", "--name-only").split()
    assert staged and not [p for p in staged if p.startswith((".venv/", ".env.l", ".env.p")) or "__pycache__" in p
                           or p == ".env"]
    assert ".gitignore" in staged and ".env.example" in staged


def test_an_existing_gitignore_gets_only_the_missing_patterns(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    mine = b"# mine\r\nnode_modules/\r\n.venv\r\n*.log"          # CRLF, no newline at the end, .venv without /
    (tmp_path / ".gitignore").write_bytes(mine)

    code, out, _ = run(capsys, "init", str(tmp_path))

    assert code == ExitCode.OK
    assert "updated     .gitignore (patterns added)" in out.splitlines()
    merged = (tmp_path / ".gitignore").read_bytes()
    assert merged.startswith(mine + b"\r\n")                      # every byte kept, the last line ended
    added = merged[len(mine):].decode("utf-8").split("\r\n")
    assert b"\n" not in merged.replace(b"\r\n", b"")              # CRLF throughout
    assert ".venv/" not in added and "__pycache__/" in added and ".env" in added
    assert added.count("__pycache__/") == 1
    again = run(capsys, "init", str(tmp_path))
    assert again[0] == ExitCode.OK and "left alone  .gitignore (exists)" in again[1].splitlines()
    assert (tmp_path / ".gitignore").read_bytes() == merged


# -- plain hooks -------------------------------------------------------------------------------------------

def test_plain_hooks_are_installed_executable_and_never_replace_a_foreign_hook(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "agent"
    code, out, _ = run(capsys, "init", str(target), "--plain-hooks")
    assert code == ExitCode.OK, out
    hooks = target / ".git" / "hooks"
    for name in ("pre-commit", "pre-push"):
        assert (hooks / name).read_bytes() == (PROJECT_ROOT / "hooks" / name).read_bytes()
        assert (hooks / name).stat().st_mode & stat.S_IXUSR
        assert f"git hook    {name}" in out.splitlines()
    assert out.splitlines()[-1].startswith("next: commit the memory files")

    code, out, _ = run(capsys, "init", str(target), "--plain-hooks")           # twice: nothing changes
    assert code == ExitCode.OK

    (hooks / "pre-push").write_text("#!/bin/sh\necho mine\n", encoding="utf-8")
    code, out, err = run(capsys, "init", str(target), "--plain-hooks")
    assert code == ExitCode.USAGE
    assert "pre-push exists and is not gitmem's hook" in err and "gitmem verify --pre-push" in err
    assert (hooks / "pre-push").read_text(encoding="utf-8") == "#!/bin/sh\necho mine\n"


def test_plain_hooks_go_where_core_hookspath_points_and_refuse_a_bad_commit(tmp_path: Path) -> None:
    target = tmp_path / "agent"
    git(tmp_path, "init", "-q", "-b", "main", str(target))
    git(target, "config", "core.hooksPath", "githooks")
    report = gitmem_init.init(target, plain_hooks=True)
    assert report.hooks == ["pre-commit", "pre-push"] and not report.problems
    assert (target / "githooks" / "pre-commit").is_file()
    env = {**isolated_env(who=HUMAN), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (target / "LOG.md").write_text((target / "LOG.md").read_text(encoding="utf-8") + "## not an entry\n",
                                   encoding="utf-8")
    run_git(target, "add", "-A", env=env)
    refused = run_git(target, "commit", "-q", "-m", "start", env=env, check=False)
    assert refused.returncode != 0 and "LOG.md:" in refused.stdout + refused.stderr


# -- the next step -----------------------------------------------------------------------------------------

def test_without_pre_commit_the_next_step_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    step = next_step(False, [], [])
    assert step.startswith("pip install pre-commit && pre-commit install --hook-type pre-commit")
    assert "gitmem init --plain-hooks" in step
    code, out, _ = run(capsys, "init", str(tmp_path / "agent"))
    assert code == ExitCode.OK and out.splitlines()[-1] == f"next: {next_step(False, [], [], None, tmp_path / 'agent')}"


def test_with_pre_commit_only_beside_gitmem_the_next_step_names_its_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "pre-commit").write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    assert next_step(False, [], []) == f"{bin_dir / 'pre-commit'} install --hook-type pre-commit --hook-type pre-push"
    (tmp_path / "onpath").mkdir()
    (tmp_path / "onpath" / "pre-commit").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "onpath" / "pre-commit").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "onpath"))
    assert next_step(False, [], []) == "pre-commit install --hook-type pre-commit --hook-type pre-push"


def test_pre_commit_beside_gitmem_in_a_folder_with_a_space_is_named_so_the_shell_runs_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "my tools" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "pre-commit").write_text("#!/bin/sh\necho ran \"$@\"\n", encoding="utf-8")
    (bin_dir / "pre-commit").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    ran = subprocess.run(["/bin/sh", "-c", next_step(False, [], [])], capture_output=True, text=True)
    assert ran.stdout == "ran install --hook-type pre-commit --hook-type pre-push\n", ran.stderr


def test_with_core_hooks_path_set_the_next_step_is_not_a_pre_commit_install_that_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit refuses `install` while core.hooksPath is set ("Cowardly refusing..."): init named it anyway."""
    target = tmp_path / "agent"
    target.mkdir()
    git(target, "init", "-q")
    git(target, "config", "core.hooksPath", ".husky")
    code, out, _ = run(capsys, "init", str(target))
    step = out.splitlines()[-1]
    assert code == ExitCode.OK and step.startswith("next: core.hooksPath is set (.husky)")
    assert "gitmem init --plain-hooks" in step
    env = {**isolated_env(who=HUMAN), "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    hooks = [str(Path(sys.executable).parent / "pre-commit"), "install", "--hook-type", "pre-commit"]
    refused = subprocess.run(hooks, cwd=target, env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "core.hooksPath" in refused.stdout + refused.stderr   # why it is not named
    code, out, _ = run(capsys, "init", "--plain-hooks", str(target))
    assert code == ExitCode.OK and (target / ".husky" / "pre-commit").is_file()
    assert out.splitlines()[-1].startswith("next: commit the memory files")


def test_once_pre_commit_install_has_run_the_next_step_is_to_commit(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`gitmem init` again after `pre-commit install` said "next: pre-commit install" once more."""
    target = tmp_path / "agent"
    code, out, _ = run(capsys, "init", str(target))
    assert code == ExitCode.OK and "pre-commit install --hook-type pre-commit" in out.splitlines()[-1]
    env = {**isolated_env(who=HUMAN), "HOME": str(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    hooks = [str(Path(sys.executable).parent / "pre-commit"), "install", "--hook-type", "pre-commit"]
    subprocess.run(hooks, cwd=target, env=env, check=True, capture_output=True)
    _, half, _ = run(capsys, "init", str(target))           # the pre-push hook is still missing
    assert "pre-commit install --hook-type pre-commit --hook-type pre-push" in half.splitlines()[-1]
    subprocess.run([*hooks, "--hook-type", "pre-push"], cwd=target, env=env, check=True, capture_output=True)
    code, out, _ = run(capsys, "init", str(target))
    assert code == ExitCode.OK
    assert out.splitlines()[-1] == ("next: commit the memory files: the git hooks run `gitmem check` before each "
                                    "commit, `gitmem verify` before each push")
    assert "pre-commit install" not in out


# -- mapped file names -------------------------------------------------------------------------------------

def test_init_creates_the_files_gitmem_yaml_names_and_check_then_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gitmem.yaml").write_text(SPANISH, encoding="utf-8")

    code, out, _ = run(capsys, "init", str(tmp_path))

    assert code == ExitCode.OK, out
    created = [line.split()[1] for line in out.splitlines() if line.startswith("created")]
    for mapped, template in (("ESTADO.md", "NOW.md"), ("DECISIONES.md", "DECISIONS.md"), ("BITACORA.md", "LOG.md"),
                             ("LECCIONES.md", "LESSONS.md"), ("CLAUDE.md", "RULES.md")):
        assert mapped in created and not (tmp_path / template).exists()
        assert (tmp_path / mapped).read_bytes() == (gitmem_init.template_dir() / template).read_bytes()
    assert "ROADMAP.md" in created                                    # not mapped: its default name
    assert (tmp_path / "gitmem.yaml").read_text(encoding="utf-8") == SPANISH
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", "--worktree") == (ExitCode.OK, "", "")
    git(tmp_path, "add", "-A")
    assert run(capsys, "check") == (ExitCode.OK, "", "")


def test_init_creates_memory_for_every_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gitmem.yaml").write_text(
        "workspaces:\n  writer:\n    memory_dir: agents/writer\n  reviewer:\n    memory_dir: agents/reviewer\n"
        "    files:\n      rules: CLAUDE.md\n", encoding="utf-8")
    code, out, _ = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.OK, out
    for where in ("NOW.md", "agents/writer/NOW.md", "agents/writer/RULES.md", "agents/reviewer/CLAUDE.md",
                  "agents/reviewer/LOG.md"):
        assert (tmp_path / where).is_file(), where
    assert not (tmp_path / "agents" / "reviewer" / "RULES.md").exists()
    monkeypatch.chdir(tmp_path)
    for name in ("writer", "reviewer"):
        assert run(capsys, "check", "--worktree", "--workspace", name) == (ExitCode.OK, "", "")


def test_an_unreadable_gitmem_yaml_creates_no_memory_under_a_guessed_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gitmem.yaml").write_text("files: [not, a, mapping\n", encoding="utf-8")
    code, out, err = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.USAGE
    assert "gitmem.yaml" in err and "no memory file was created" in err
    assert not (tmp_path / "NOW.md").exists() and (tmp_path / "prompts" / "cycle.md").exists()
    # The next step is the fix, not the hooks: "next: pre-commit install" came after the refusal.
    assert out.splitlines()[-1] == "next: fix what is named above, then run `gitmem init` again", out
    assert "pre-commit install" not in out


@pytest.mark.parametrize("outer_repository", [False, True], ids=["from-a-plain-folder", "from-the-repo-around-it"])
def test_init_of_another_folder_names_a_next_step_that_runs_in_that_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        outer_repository: bool) -> None:
    """`gitmem init my-agent` printed `next: pre-commit install ...`, to be run where the human stood: outside
    the new repository it failed ("not a git repository"), and in a repository around the new one it installed
    the hooks there, leaving the agent's repository without any."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pre-commit").write_text('#!/bin/sh\ngit rev-parse --show-toplevel > "$RAN_IN"\n', encoding="utf-8")
    (bin_dir / "pre-commit").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    here = tmp_path / "work"
    here.mkdir()
    if outer_repository:
        git(here, "init", "-q")
    monkeypatch.chdir(here)
    code, out, _ = run(capsys, "init", "my agent")
    assert code == ExitCode.OK, out
    step = out.splitlines()[-1].removeprefix("next: ")
    ran_in = tmp_path / "ran-in"
    subprocess.run(["/bin/sh", "-c", step], cwd=here, env={**os.environ, "RAN_IN": str(ran_in)}, check=True)
    assert Path(ran_in.read_text(encoding="utf-8").strip()).resolve() == (here / "my agent").resolve(), step
    monkeypatch.chdir(here / "my agent")                # from inside it, the step is the command alone
    code, out, _ = run(capsys, "init")
    assert out.splitlines()[-1] == "next: pre-commit install --hook-type pre-commit --hook-type pre-push"


def test_init_warns_of_a_projects_own_log_that_gitmem_could_not_write_to(tmp_path: Path, cli, git_env) -> None:  # type: ignore[no-untyped-def]
    """A repository with its own LOG.md (a changelog-like file): init said "left alone LOG.md (exists)", exit 0,
    `next: pre-commit install`, and the first `gitmem log add` was refused (GM306). Init now says so, with the
    line and the ways out; a valid memory, run again, gets no such warning."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "LOG.md").write_text("# Project log\n\n## 2024-01-01\n- shipped v1\n\n## v1.1\n- notes\n")
    done = cli(["init"], cwd=tmp_path)
    assert done.code == ExitCode.OK
    assert "left alone  LOG.md (exists)" in done.out
    warning = [line for line in done.err.splitlines() if "LOG.md was here before init" in line]
    assert len(warning) == 1
    assert ("is not valid memory (LOG.md:3: GM306 malformed LOG heading `## 2024-01-01`" in warning[0]
            and "; and 1 more)" in warning[0] and "move it aside" in warning[0])
    refused = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=tmp_path)
    assert refused.code == ExitCode.VIOLATIONS and "LOG.md:3: GM306" in refused.err   # what the warning foretold
    (tmp_path / "LOG.md").unlink()
    assert cli(["init"], cwd=tmp_path).code == ExitCode.OK
    assert "before init" not in cli(["init"], cwd=tmp_path).err



def test_init_warns_of_a_projects_own_log_that_parses_but_holds_no_entry_of_gitmems(tmp_path: Path, cli,  # type: ignore[no-untyped-def]
                                                                                   git_env) -> None:
    """A changelog that happens to parse as LOG (a title of its own, plain lines, no `## ` heading) got no
    warning: "left alone", and the first `gitmem log add` appended the agent's entries to the project's own
    changelog. Its title and the absence of any entry of gitmem's say it is not memory yet."""
    git(tmp_path, "init", "-q", "-b", "main")
    own = "# Changelog of my project\n\n- v1 shipped\n"
    (tmp_path / "LOG.md").write_text(own)
    done = cli(["init"], cwd=tmp_path)
    assert done.code == ExitCode.OK and "left alone  LOG.md (exists)" in done.out
    assert [line for line in done.err.splitlines() if "LOG.md was here before init" in line] == [
        "gitmem: warning: LOG.md was here before init, with its own title ('# Changelog of my project') and no "
        "entry of gitmem's in it: the first `gitmem log add` writes the agent's entries into it; if it is a file of "
        "your own, move it aside (or name another file for its role under `files:` in gitmem.yaml) and run "
        "`gitmem init` again"]
    assert (tmp_path / "LOG.md").read_text() == own                               # still left alone
    # gitmem's own files, fresh from the template or holding entries under a title of their own, are memory:
    assert cli(["init", str(tmp_path / "fresh")], cwd=tmp_path).code == ExitCode.OK
    assert "before init" not in cli(["init"], cwd=tmp_path / "fresh").err
    (tmp_path / "LOG.md").write_text("# Bitácora\n")
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=tmp_path).code == 0
    assert "before init" not in cli(["init"], cwd=tmp_path).err


# -- a repository made from the template on GitHub -----------------------------------------------------------

def test_a_clone_of_a_repository_made_from_the_template_is_told_to_register_the_merge_driver(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """"Use this template" copies the template's files into a new repository; its README never ran `gitmem init`,
    and the template had no `.gitattributes`: such a clone had no merge driver and nothing said so (GM925 reads
    `.gitattributes`), so the first `git pull --rebase` after a scheduled cycle conflicted on memory line by line.
    The template now names the driver, its README runs `gitmem init`, and init registers it in place."""
    made = tmp_path / "made-from-template"
    shutil.copytree(PROJECT_ROOT / "template-repo", made)
    git(made, "init", "-q", "-b", "main")
    git(made, "add", "-A")
    git(made, "commit", "-q", "-m", "Initial commit")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(made), str(clone))
    monkeypatch.chdir(clone)

    code, out, _ = run(capsys, "check", "--worktree")
    assert code == ExitCode.OK
    assert out.startswith(".gitattributes:3: GM925 "), out
    attributes = (clone / ".gitattributes").read_bytes()

    assert run(capsys, "init")[0] == ExitCode.OK
    assert run(capsys, "check", "--worktree")[1] == ""
    assert (clone / ".gitattributes").read_bytes() == attributes        # the template's lines were enough
    assert "merge-driver" in git(clone, "config", "merge.gitmem.driver")
    readme = (PROJECT_ROOT / "template-repo" / "README.md").read_text(encoding="utf-8")
    assert "pre-commit install --hook-type pre-commit --hook-type pre-push\n   gitmem init\n" in readme

    # Copied by init into a project whose memory has other names, the template's lines would give the project's
    # own LOG.md the memory merge: init writes the lines of the files gitmem.yaml maps instead.
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "gitmem.yaml").write_text(SPANISH, encoding="utf-8")
    (project / "LOG.md").write_text("# Our changelog\n", encoding="utf-8")
    assert run(capsys, "init", str(project))[0] == ExitCode.OK
    merged = [line.split()[0] for line in (project / ".gitattributes").read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    assert merged == ["/BITACORA.md", "/ESTADO.md", "/DECISIONES.md", "/LECCIONES.md"]
