"""`gitmem demo`: the whole loop offline; the history it leaves passes `gitmem verify` commit by commit."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from gitmem.checks.check_and_verify import verify_range
from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log, rules
from gitmem.scaffold.demo import run_demo
from gitmem.workspace import Workspace


def test_the_demo_runs_the_whole_loop(tmp_path: Path, git_env, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    target = tmp_path / "demo"
    began = time.monotonic()
    lines: list[str] = []
    result = run_demo(target, emit=lines.append)
    assert time.monotonic() - began < 30
    assert lines == result.steps and result.path == target
    text = "\n".join(lines)

    repo = pygit2.Repository(str(target))
    checked = verify_range(Workspace.at(target), None, "HEAD")
    assert checked.violations == [] and not checked.rewritten
    assert not repo.status(untracked_files="all")

    # Each step is in the narrative, and in the repository.
    assert "Created a repository from the template" in text
    for number in range(1, 7):
        assert f"   cycle {number} · " in text
    entries = log.parse((target / "LOG.md").read_text()).entries
    assert [e.outcome for e in entries if e.cycle] == ["built", "built", "built", "built", "published", "no-build"]
    assert "Dana Human answers D-0001" in text
    resolved = decisions.parse((target / "DECISIONS.md").read_text()).settled
    assert [d.id for d in resolved] == ["D-0001"] and resolved[0].answered[1] == "Dana Human"
    answer = next(c for c in repo.walk(repo.head.target) if c.message == "decision: answer D-0001")
    assert answer.author.name == "Dana Human"
    assert "its context listed D-0001 under 'newly resolved" in text
    assert (target / "LICENSE").read_text().startswith("MIT License")
    lesson = lessons.parse((target / "LESSONS.md").read_text()).find("L-0001")
    assert [event.cycle for _, event in lesson.confirmations] == [4, 5]
    assert "Rule 0: cycle 6 wrote no LOG entry" in text
    assert "Rule 0" in entries[-2 if entries[-1].cycle is None else -1].get("Result")
    if result.closed:
        assert "Daily close (closed)" in text and "L-0001 -> R-01" in text
        # It closes the day its cycles ran, whatever the hour (in the morning, a plain close is yesterday's).
        assert f"closed {entries[0].when.moment.date().isoformat()}: 6 cycles" in text, text
        assert entries[-1].cycle is None                      # the close entry
        assert rules.parse((target / "RULES.md").read_text()).proven[0].lesson == "L-0001"
    assert "Final history (git log --oneline):" in text
    subjects = [line.split(" ", 4)[-1] for line in lines if line.startswith("   ") and " gitmem: " in line]
    assert "gitmem: cycle 1 · built · Ship hello.py" in subjects


def test_the_cli_names_its_temp_dir_and_refuses_a_non_empty_one(tmp_path: Path, cli, git_env,
                                                                 monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    result = cli(["demo"], cwd=tmp_path)
    assert result.code == ExitCode.OK, result.err
    first = result.lines[0]
    assert first.startswith(f"gitmem demo in {tmp_path}{'/'}gitmem-demo-")
    made = Path(first.removeprefix("gitmem demo in "))
    assert (made / "LOG.md").exists()
    refused = cli(["demo", str(made)], cwd=tmp_path)
    assert refused.code == ExitCode.USAGE and "is not empty" in refused.err


@pytest.mark.skipif(shutil.which("faketime") is None, reason="libfaketime is not installed (Debian: faketime); "
                    ".ci/run installs it")
def test_a_demo_run_in_the_morning_closes_the_day_its_cycles_ran(tmp_path: Path, git_env) -> None:
    """At 08:00 a plain close is a late close of yesterday (close.late_hours); the demo's cycles ran today, and
    its close reports them, whatever the hour the demo is run at."""
    gitmem = Path(sys.executable).parent / "gitmem"
    done = subprocess.run(["faketime", "2026-12-06 08:00:00", str(gitmem), "demo", str(tmp_path / "demo")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "Daily close (closed): closed 2026-12-06: 6 cycles" in done.stdout, done.stdout


def test_the_explore_command_runs_as_printed_in_a_folder_with_spaces_and_unicode(tmp_path: Path, git_env,
                                                                                monkeypatch) -> None:
    """The demo's last line is a shell command to paste: `cd dé mo && …` unquoted went to the wrong folder."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    target = tmp_path / "dé mo $HOME"
    lines: list[str] = []
    run_demo(target, emit=lines.append)
    command = lines[-1].removeprefix("Explore it: ")
    assert command != lines[-1]
    ran = subprocess.run(["sh", "-c", command.replace(" && ", " >/dev/null && ") + " >/dev/null && pwd"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(target)


def test_the_readmes_demo_lines_are_what_the_demo_prints(tmp_path: Path, git_env, monkeypatch, cli) -> None:
    """The README's `gitmem demo` block said "from the template (13 files), committed by …" while the demo made 14
    and fills in RULES.md first. Each line the README shows (abridged: some lines left out) is a line the demo
    prints, in order, with only its commit ids and day differing."""
    import re

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("`gitmem demo` (abridged):\n\n```text\n", 1)[1].split("```", 1)[0].splitlines()
    printed = cli(["demo", "demo1"], cwd=tmp_path).out

    def same(line: str) -> str:
        return re.sub(r"\[[0-9a-f]{7}\]", "[sha]", re.sub(r"\d{4}-\d\d-\d\d", "DAY", line))

    shown = [same(line) for line in printed.splitlines()]
    at = 0
    for line in block:
        assert same(line) in shown[at:], line
        at = shown.index(same(line), at) + 1
