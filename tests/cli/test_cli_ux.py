"""The CLI as people expect it: status on one screen, colour rules, suggestions, shell completion."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.cli.status import SCREEN, fit, render_dashboard
from gitmem.scaffold.init import template_dir
from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.terminal import run_on_a_terminal
from tests.support.world import World, at

BIN = Path(sys.executable).parent


@pytest.fixture
def data(world: World) -> dict:
    world.cycle(at(10, 9), "built", task="add the parser")
    world.clock.moment = at(11, 12)
    return collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()


def crowded(data: dict, pending: int, awaiting: int, eligible: int) -> dict:
    """`data` with long lists, as status collects them at 10x and 100x scale."""
    return {**data,
            "pending": [{"id": f"D-{n:04d}", "title": f"question {n}", "age_days": 3, "age": "3d", "stale": False}
                        for n in range(pending)],
            "awaiting": [{"id": f"L-{n:04d}", "title": f"lesson {n}", "needed": 2, "confirmations": 1}
                         for n in range(awaiting)],
            "eligible": [{"id": f"L-{n:04d}", "title": f"ripe {n}", "cycles": [1, 2], "has_rule": True}
                         for n in range(eligible)],
            "waiting_for_room": []}


@pytest.mark.parametrize("sizes", [(6, 134, 124), (400, 1340, 1240), (0, 2000, 0)], ids=["10x", "100x", "one-list"])
def test_status_fits_one_screen_at_any_scale_and_says_how_many_more(data: dict, sizes: tuple[int, int, int]) -> None:
    pending, awaiting, eligible = sizes
    lines = render_dashboard(crowded(data, *sizes), colour=False).splitlines()
    assert len(lines) <= SCREEN
    more = [int(line.split("+")[1].split()[0]) for line in lines if line.startswith("  +")]
    shown = {prefix: sum(1 for line in lines if line.startswith(prefix))
             for prefix in ("  D-", "  L-")}
    assert shown["  D-"] + shown["  L-"] + sum(more) == pending + awaiting + eligible
    if eligible:            # each list is capped on its own: the eligible lessons are not hidden behind the rest
        assert any(line.startswith("  L-") and "ripe" in line for line in lines)


def test_status_shows_every_item_when_they_fit(data: dict) -> None:
    lines = render_dashboard(crowded(data, 3, 4, 2), colour=False).splitlines()
    assert not [line for line in lines if line.startswith("  +")]
    assert sum(1 for line in lines if line.startswith(("  D-", "  L-"))) == 9
    assert fit(["a", "  1", "  2", "\0", "  3", "b"]) == ["a", "  1", "  2", "  3", "b"]


def test_status_flags_template_placeholders_left_in_rules(world: World) -> None:
    world.git.write("RULES.md", (template_dir() / "RULES.md").read_text(encoding="utf-8"))
    data = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    assert [(p["line"], p["text"]) for p in data["placeholders"]] == [
        (6, "<agent name>"), (7, "<one sentence: what this agent exists to do>"),
        (8, "<who answers DECISIONS.md, and how to reach them>")]
    text = render_dashboard(data, colour=False)
    assert ("  RULES.md:6: GM717 placeholder <agent name> left: every prompt reads it, so the agent would start "
            "without it") in text.splitlines()
    rules = world.read("RULES.md")
    filled = (rules.replace("<agent name>", "Scout").replace("<one sentence: what this agent exists to do>", "Ship.")
              .replace("<who answers DECISIONS.md, and how to reach them>", "Ada <ada@example.org>")
              + "- see <https://example.org/guide> and <b>bold</b>\n")
    world.git.write("RULES.md", filled)
    again = collect_status(Workspace.at(world.git.path, world.config), clock=world.clock).to_json()
    assert again["placeholders"] == []


def test_status_names_each_placeholder_line_as_path_line_code_message(tmp_path: Path, cli, git_env) -> None:  # type: ignore[no-untyped-def]
    """A new user's first `gitmem status` on the template flags RULES.md's placeholders in the one diagnostic form
    (`path:line: GMnnn message`), the same lines the cycle's GM717 refusal prints."""
    assert cli(["init", str(tmp_path)], cwd=tmp_path).code == 0
    shown = cli(["status"], cwd=tmp_path)
    assert shown.code == 0
    flagged = [line.strip() for line in shown.out.splitlines() if line.strip().startswith("RULES.md:")]
    assert flagged == [
        "RULES.md:6: GM717 placeholder <agent name> left: every prompt reads it, so the agent would start without it",
        "RULES.md:7: GM717 placeholder <one sentence: what this agent exists to do> left: every prompt reads it, "
        "so the agent would start without it",
        "RULES.md:8: GM717 placeholder <who answers DECISIONS.md, and how to reach them> left: every prompt reads "
        "it, so the agent would start without it"]


def _json_failure_or_nothing(argv: list[str], err: str) -> str:
    """What stdout holds of a failure: nothing, or with --json the failure as one JSON object."""
    if "--json" not in argv:
        return ""
    message = err.strip().splitlines()[-1].removeprefix("gitmem: ")
    return json.dumps({"error": message, "code": None, "exit_code": 2, "violations": []}, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("argv", [["context"], ["context", "--json"], ["pending"], ["pending", "--json"]])
def test_reading_commands_without_memory_say_so_as_status_does(tmp_path: Path, cli, git_env,  # type: ignore[no-untyped-def]
                                                               argv: list[str]) -> None:
    """In a folder with no memory, `context` printed a prompt with "(RULES.md is missing or empty)" and `pending`
    said "No decisions are waiting.", both exit 0: a newcomer in the wrong folder took that for an empty memory."""
    git(tmp_path, "init", "-q", "-b", "main")
    done = cli(argv, cwd=tmp_path)
    assert done.code == 2 and done.out == _json_failure_or_nothing(argv, done.err)
    assert "no gitmem memory here: none of NOW.md, DECISIONS.md, LOG.md, LESSONS.md, RULES.md exists" in done.err
    assert "run `gitmem init`" in done.err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]


@pytest.mark.parametrize("argv", [["close"], ["close", "--json"], ["recall", "hello"], ["recall", "hello", "--json"],
                                  ["export", "--to", "claude", "--out", "exported"]])
def test_close_and_recall_without_memory_say_so_and_write_nothing(tmp_path: Path, cli, git_env,  # type: ignore[no-untyped-def]
                                                                  argv: list[str]) -> None:
    """In a repository with no gitmem memory, `close` created LOG.md and NOW.md and committed "gitmem: close" as the
    agent, exit 0; `recall` said "no memory of that" and `export` wrote a pointer to this repository ("Exported 0
    entries"), exit 0, as if an empty memory were here."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "app.py").write_text("print('hi')\n")
    git(tmp_path, "add", "app.py")
    git(tmp_path, "commit", "-q", "-m", "my project")
    before = git(tmp_path, "rev-parse", "HEAD")
    done = cli(argv, cwd=tmp_path)
    assert done.code == 2 and done.out == _json_failure_or_nothing(argv, done.err)
    assert "no gitmem memory here: none of NOW.md, DECISIONS.md, LOG.md, LESSONS.md, RULES.md exists" in done.err
    assert git(tmp_path, "rev-parse", "HEAD") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "app.py"]


@pytest.mark.parametrize("argv", [["status"], ["context"], ["pending"], ["log", "add", "--task", "t", "--outcome",
                                                                            "built", "--result", "r"]])
def test_commands_without_memory_in_a_subfolder_name_the_init_that_works_from_there(  # type: ignore[no-untyped-def]
        tmp_path: Path, cli, git_env, argv: list[str]) -> None:
    """From `src/app` of a repository they said "run `gitmem init`", which there is refused (a folder inside a
    repository) or, in an empty folder, makes a second repository. The hint names the root, and it works."""
    root = tmp_path / "my repo"
    (root / "src" / "app").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "src" / "app" / "main.py").write_text("print('hi')\n")
    done = cli(argv, cwd=root / "src" / "app")
    assert done.code == 2 and done.out == ""
    hint = f"run `gitmem init '{root}'` to create it"
    assert hint in done.err
    assert cli(["init", str(root)], cwd=root / "src" / "app").code == 0
    assert (root / "LOG.md").is_file() and not (root / "src" / "app" / ".git").exists()


@pytest.mark.parametrize("argv", [["status"], ["context"], ["pending"], ["log", "add", "--task", "t", "--outcome",
                                                                            "built", "--result", "r"]])
def test_commands_on_memory_in_a_bare_repository_say_to_clone_it_as_init_does(tmp_path: Path, cli, git_env,  # type: ignore[no-untyped-def]
                                                                              argv: list[str]) -> None:
    """In a bare origin they said "run `gitmem init`", which there refuses: "clone it and run `gitmem init` in the
    clone"."""
    git(tmp_path, "init", "-q", "--bare", "origin.git")
    done = cli(argv, cwd=tmp_path / "origin.git")
    assert done.code == 2 and done.out == ""
    assert "is a bare repository: it holds history, no memory files; clone it and run gitmem in the clone" in done.err
    assert "run `gitmem init`" not in done.err


def test_status_without_memory_says_so(tmp_path: Path, cli, git_env) -> None:  # type: ignore[no-untyped-def]
    git(tmp_path, "init", "-q", "-b", "main")
    done = cli(["status"], cwd=tmp_path)
    assert done.code == 2 and done.out == ""
    assert "no gitmem memory here: none of NOW.md, DECISIONS.md, LOG.md, LESSONS.md, RULES.md exists" in done.err
    assert "run `gitmem init`" in done.err
    assert cli(["status", "--json"], cwd=tmp_path).code == 2


def test_status_names_memory_files_that_are_missing(memrepo: GitRepo, cli) -> None:  # type: ignore[no-untyped-def]
    memrepo.delete("LESSONS.md")
    done = cli(["status"], cwd=memrepo.path)
    assert done.code == 0
    assert "missing      LESSONS.md (run `gitmem init`)" in done.out.splitlines()
    assert json.loads(cli(["status", "--json"], cwd=memrepo.path).out)["missing"] == ["LESSONS.md"]


def on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What `argv` prints to a terminal (a pty on stdout and stderr)."""
    done, text = run_on_a_terminal(argv, cwd, env, timeout=60)
    assert done.returncode == 0
    return text


def test_colour_follows_no_color_and_the_flags(memrepo: GitRepo) -> None:
    gitmem = str(BIN / "gitmem")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[" in on_a_terminal([gitmem, "status"], memrepo.path, env)
    assert "\x1b[" not in on_a_terminal([gitmem, "status"], memrepo.path, {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in on_a_terminal([gitmem, "--no-color", "status"], memrepo.path, env)
    assert "\x1b[" in on_a_terminal([gitmem, "--color", "status"], memrepo.path, {**env, "NO_COLOR": "1"})
    piped = subprocess.run([gitmem, "status"], cwd=memrepo.path, capture_output=True, text=True, env=env)
    assert "\x1b[" not in piped.stdout
    forced = subprocess.run([gitmem, "--color", "status"], cwd=memrepo.path, capture_output=True, text=True, env=env)
    assert "\x1b[" in forced.stdout


@pytest.mark.parametrize("argv", [["status"], ["fleet", "status"]])
def test_the_colour_flags_also_work_after_the_command_that_colours(memrepo: GitRepo, argv: list[str]) -> None:
    """`gitmem status --no-color` reads as a user types it: the flags after the command that colours its output,
    as before it."""
    gitmem = str(BIN / "gitmem")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if argv[0] == "fleet":
        memrepo.commit_files({"fleet.yaml": "agents:\n  - name: one\n    repo: .\n"})
    assert "\x1b[" not in on_a_terminal([gitmem, *argv, "--no-color"], memrepo.path, env)
    forced = subprocess.run([gitmem, *argv, "--color"], cwd=memrepo.path, capture_output=True, text=True, env=env)
    assert forced.returncode == 0, forced.stderr
    assert "\x1b[" in forced.stdout
    assert "--no-color" in subprocess.run([gitmem, *argv, "--help"], capture_output=True, text=True, env=env).stdout


@pytest.mark.parametrize(("argv", "suggestion"), [
    (["stauts"], "Did you mean 'status'?"),
    (["verfy"], "Did you mean 'verify'?"),
    (["log", "ad"], "Did you mean 'add'?"),
    (["xyzzy"], None),
])
def test_a_mistyped_command_gets_a_suggestion(tmp_path: Path, cli, argv: list[str],  # type: ignore[no-untyped-def]
                                              suggestion: str | None) -> None:
    done = cli(argv, cwd=tmp_path)
    assert done.code == 2
    assert f"No such command {argv[-1]!r}." in done.err
    if suggestion:
        assert suggestion in done.err
    else:
        assert "Did you mean" not in done.err
    assert cli(["--help"], cwd=tmp_path).code == 0


def test_shell_completion_works_with_the_lazy_commands(tmp_path: Path) -> None:
    gitmem = str(BIN / "gitmem")
    source = subprocess.run([gitmem], env={**os.environ, "_GITMEM_COMPLETE": "bash_source"}, capture_output=True,
                            text=True, cwd=tmp_path)
    assert "_gitmem_completion()" in source.stdout and "complete " in source.stdout
    for words, cword, expected in (("gitmem sta", "1", "plain,status"), ("gitmem log a", "2", "plain,add")):
        done = subprocess.run([gitmem], capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "_GITMEM_COMPLETE": "bash_complete", "COMP_WORDS": words,
                                   "COMP_CWORD": cword})
        assert expected in done.stdout.splitlines()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for shell in ("bash_source", "zsh_source", "fish_source"):
        assert f"_GITMEM_COMPLETE={shell} gitmem" in readme


@pytest.mark.parametrize("argv", [["context", "--offline"], ["cycle", "--dry-run", "--agent", "command"]])
def test_the_prompt_shown_to_a_human_carries_no_escape_an_agent_planted(memrepo: GitRepo, cli,  # type: ignore[no-untyped-def]
                                                                        argv: list[str]) -> None:
    """A decision committed past the check (`--no-verify`) with an OSC escape reached the terminal raw through
    `context` and `cycle --dry-run`: it set the window title (OSC 52 writes the clipboard), while `pending`,
    `status` and `recall` showed the same line as `\\u001b`."""
    decisions = memrepo.read("DECISIONS.md").replace(
        "## Pending\n", "## Pending\n\n### D-0001 · Deploy \x1b]0;PWNED\x07now\n"
        "- Asked: 2026-12-07 08:00 UTC (cycle 1)\n- Recommendation: yes \x1b]52;c;cm0gLXJmIH4=\x07\n", 1)
    memrepo.commit_files({"DECISIONS.md": decisions}, "past the check")
    shown = cli(argv, cwd=memrepo.path)
    assert shown.code == 0, shown.err
    assert "\x1b" not in shown.out and "\x07" not in shown.out
    assert "Deploy \\u001b]0;PWNED\\u0007now" in shown.out
    assert "\\u001b]52;c;cm0gLXJmIH4=\\u0007" in shown.out
    assert "Deploy \\u001b]0;PWNED\\u0007now" in cli(["pending"], cwd=memrepo.path).out
