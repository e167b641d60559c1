"""`gitmem recall` from the command line: output, JSON, filters, workspaces, and usage errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo, many_commits
from tests.support.recall_support import History
from tests.support.terminal import run_on_a_terminal

BIN = Path(sys.executable).parent


@pytest.fixture
def history(memrepo: GitRepo) -> History:
    history = History(memrepo)
    history.cycle(task="set up the staging nginx", result="nginx serves the heron site on port 8080")
    history.cycle()
    history.memory.add_lesson(title="Heron deploys need a warm cache", happened="the heron site was slow",
                              why="cold cache", change="warm the cache after deploy")
    history.commit("lesson about heron")
    return history


def test_text_output_names_kind_id_date_and_place(history: History, cli) -> None:
    result = cli(["recall", "heron", "nginx"], cwd=history.root)
    assert result.code == ExitCode.OK, result.err
    first = result.lines[0]
    assert first.startswith("LOG.md:8 [log cycle 1 2025-06-02 09:01 UTC] ")
    assert "**nginx**" in first and "**heron**" in first
    lines = history.repo.read("LOG.md").split("\n")
    assert lines[7].startswith("## 2025-06-02 09:01 UTC · cycle 1")


def test_json_output_has_every_field(history: History, cli) -> None:
    result = cli(["recall", "heron", "--json", "--kind", "lesson"], cwd=history.root)
    assert result.code == ExitCode.OK
    data = json.loads(result.out)
    assert set(data) == {"mode", "known", "hits", "unreadable"} and data["mode"] in ("bm25", "hybrid")
    assert data["known"] is True and data["unreadable"] == []
    hits = data["hits"]
    assert [(h["kind"], h["id"], h["path"]) for h in hits] == [("lesson", "L-0001", "LESSONS.md")]
    assert set(hits[0]) == {"kind", "id", "date", "path", "line", "snippet", "score", "workspace", "holds"}
    assert 0.35 <= hits[0]["score"] <= 1.0 and hits[0]["date"] == "2025-06-03"


def test_nothing_found_says_so(history: History, cli) -> None:
    result = cli(["recall", "kubernetes"], cwd=history.root)
    assert (result.code, result.out) == (ExitCode.OK, "no memory of that\n")
    assert json.loads(cli(["recall", "kubernetes", "--json"], cwd=history.root).out)["hits"] == []


def test_filters_limit_and_min_score(history: History, cli) -> None:
    assert cli(["recall", "heron", "--kind", "commit", "--json"], cwd=history.root).out.count('"commit"') == 1
    dated = cli(["recall", "heron", "--since", "2025-06-03", "--until", "2025-06-03", "--json"], cwd=history.root)
    assert {h["id"] for h in json.loads(dated.out)["hits"]} == {"L-0001"}
    one = cli(["recall", "heron", "--limit", "1", "--min-score", "0"], cwd=history.root)
    assert len(one.lines) == 1
    strict = cli(["recall", "heron", "--min-score", "1.0"], cwd=history.root)
    assert len(strict.lines) <= 1


def test_rebuild_flag_rebuilds_then_searches(history: History, cli) -> None:
    index = history.root / ".git" / "gitmem" / "recall.sqlite"
    assert cli(["recall", "heron"], cwd=history.root).code == ExitCode.OK
    before = index.stat().st_ino
    result = cli(["recall", "heron", "--rebuild", "--kind", "lesson"], cwd=history.root)
    assert result.code == ExitCode.OK and result.lines[0].startswith("LESSONS.md:")
    assert index.stat().st_ino != before


@pytest.mark.parametrize("argv", [
    ["recall", "x", "--since", "last tuesday"],
    ["recall", "x", "--workspace", "a", "--all-workspaces"],
    ["recall", "x", "--kind", "email"],
    ["recall", "x", "--min-score", "2"],
    ["recall"],
])
def test_usage_errors_exit_2(history: History, cli, argv: list[str]) -> None:
    result = cli(argv, cwd=history.root)
    assert result.code == ExitCode.USAGE
    assert "Traceback" not in result.err


@pytest.mark.parametrize(("since", "until"), [
    ("2025-06-04", "2025-06-02"), ("2025-06-03 12:00", "2025-06-03 09:00"), ("2025-06-04 00:00", "2025-06-03"),
])
def test_a_window_that_ends_before_it_starts_is_a_usage_error_not_no_memory(history: History, cli, since: str,
                                                                            until: str) -> None:
    """`report` refused --since after --until; recall answered "no memory of that" (exit 0) about a lesson
    that is there, which an agent reads as "never happened"."""
    result = cli(["recall", "heron", "--since", since, "--until", until, "--json"], cwd=history.root)
    assert result.code == ExitCode.USAGE
    assert json.loads(result.out)["error"].startswith(f"--since {since}")
    assert "is after --until" in result.err
    # A moment inside the day an --until day names is in the window: the day bound takes in its whole day.
    same_day = cli(["recall", "heron", "--since", "2025-06-03 00:00", "--until", "2025-06-03", "--json"],
                   cwd=history.root)
    assert {h["id"] for h in json.loads(same_day.out)["hits"]} == {"L-0001"}


@pytest.mark.parametrize(("argv", "said"), [
    (["--limit", "1000000000000000000000"], "limit must be at most 1000"),   # was SQLite's OverflowError, exit 70
    (["--limit", "1001"], "limit must be at most 1000"),
    (["--min-score", "nan"], "min_score must be a finite number"),          # was every hit dropped, exit 0
])
def test_recall_numbers_are_held_to_the_bounds_of_their_recall_settings(history: History, cli, argv: list[str],
                                                                         said: str) -> None:
    """--limit and --min-score take the bounds gitmem.yaml's recall.limit and recall.min_score have."""
    result = cli(["recall", "heron", *argv], cwd=history.root)
    assert result.code == ExitCode.USAGE, result.err
    assert "Traceback" not in result.err and said in result.err and result.out == ""


def test_the_library_search_holds_limit_min_score_and_gap_to_their_bounds(history: History) -> None:
    from gitmem.recall import search
    from gitmem.recall.database import RecallError
    from gitmem.workspace import Workspace

    ws = Workspace.open(history.root)
    for given in ({"limit": 0}, {"limit": 10**21}, {"min_score": float("nan")}, {"gap": -0.5}, {"gap": float("inf")}):
        with pytest.raises(RecallError, match=f"recall: {next(iter(given))} must "):
            search(ws, "heron", **given)
    assert search(ws, "heron", limit=1000, min_score=0.0, gap=1.0)


@pytest.mark.parametrize("query", ['"', "NEAR(", "*", "x" * 10_000, "  "])
def test_hostile_queries_never_trace(history: History, cli, query: str) -> None:
    result = cli(["recall", query], cwd=history.root)
    assert result.code == ExitCode.OK, result.err
    assert result.out == "no memory of that\n"


def test_all_workspaces_labels_each_hit(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": "workspaces:\n  scout:\n    memory_dir: scout\n"}, "a second agent")
    from gitmem.config import load_config

    base = load_config(memrepo.path)
    scout = base.with_workspace("scout")
    for role in ("now", "decisions", "log", "lessons", "rules"):
        memrepo.write(scout.path(role), (memrepo.path / getattr(base.files, role)).read_bytes())
    History(memrepo, scout).cycle(result="scout mapped the lagoon")
    History(memrepo, base).cycle(result="main agent drained the lagoon")
    own = cli(["recall", "lagoon", "--kind", "log", "--workspace", "scout"], cwd=memrepo.path)
    assert [line.split(":")[0] for line in own.lines] == ["scout/LOG.md"]
    both = cli(["recall", "lagoon", "--kind", "log", "--all-workspaces"], cwd=memrepo.path)
    assert sorted(line.split(" [")[1].split("]")[0].split(" · ")[1] for line in both.lines) == ["default", "scout"]
    unknown = cli(["recall", "lagoon", "--workspace", "nobody"], cwd=memrepo.path)
    assert unknown.code == ExitCode.USAGE and "nobody" in unknown.err


def test_rebuild_shows_progress_on_a_terminal_only(memrepo: GitRepo) -> None:
    """Issue 12: `recall --rebuild` over a long history shows click's bar on stderr on a terminal; pipes and
    CI get none, and the answer is the same."""
    many_commits(memrepo, 230)
    argv = [str(BIN / "gitmem"), "recall", "--rebuild", "count", "--mode", "bm25"]
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    piped = subprocess.run(argv, cwd=memrepo.path, capture_output=True, text=True, env=env)
    assert piped.returncode == 0 and "rebuilding" not in piped.stderr
    total = 5 + 231       # the five memory files (no ROADMAP in the fixture) and every commit
    done, terminal = run_on_a_terminal(argv, memrepo.path, env, stdout_too=False)
    assert done.returncode == 0 and done.stdout.decode() == piped.stdout
    assert "rebuilding the recall index" in terminal and f"{total}/{total}" in terminal
    done, terminal = run_on_a_terminal(argv, memrepo.path, {**env, "CI": "true"}, stdout_too=False)
    assert done.returncode == 0 and "rebuilding" not in terminal


@pytest.mark.parametrize(("argv", "said"), [
    (["--workspace", "a", "--all-workspaces"], "use --workspace NAME or --all-workspaces, not both"),
    (["--all", "--min-score", "0.2"], "use --all or --min-score, not both"),
])
def test_clashing_options_are_refused_before_the_workspace_is_opened(tmp_path: Path, cli, argv: list[str],
                                                                     said: str) -> None:
    """Outside any repository, and with --rebuild: the clash is named first, and nothing is rebuilt."""
    result = cli(["recall", "x", "--rebuild", *argv], cwd=tmp_path)
    assert result.code == ExitCode.USAGE and said in result.err and "not a git repository" not in result.err
