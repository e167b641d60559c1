"""Clocks that disagree (issue 30, Time): one ordering rule for LOG and NOW (rules 4, docs/format.md "Time").

Real repositories: a bare origin, the runner's clone on the true clock, a human's clone on a laptop whose clock
runs 3 hours fast (libfaketime shifts every clock the human's `gitmem`, `git commit` and pre-commit read).
A scheduled cycle after the human's entry commits and pushes with its own clock's time; the agent's hand-written
2099 is re-dated; `check` refuses an entry ahead of the clock and `verify` flags one that reached the branch,
naming its line; history made under rules 1-3 keeps its old judgement.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gitmem import codes
from gitmem.checks.check_and_verify import verify_range
from gitmem.cli.cycle import EXIT_CODES as CYCLE_EXIT_CODES
from gitmem.errors import ExitCode
from gitmem.memory import log, now
from tests.support.builders import LOG_BASE, TS, log_entry, now_block, now_md
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import GIT, git, isolated_env
from tests.support.helpers import DANA, GitRepo
from tests.support.hostile import GITMEM, command_agent

FAKETIME = shutil.which("faketime")
needs_faketime = pytest.mark.skipif(FAKETIME is None, reason="libfaketime is not installed (Debian: faketime); "
                                                               ".ci/run installs it")

# The agent writes its LOG entry and NOW block by hand, dated 2099 (a model that guessed the date).
_FORGED = '''
cyc = os.environ["GITMEM_CYCLE"]
with open(os.path.join(root, "LOG.md"), "a") as h:
    h.write(f"\\n## 2099-01-01 00:00 UTC · cycle {cyc} · built\\n- Task: forged\\n- Result: done\\n")
t = open(os.path.join(root, "NOW.md")).read()
title, _, rest = t.partition("\\n")
open(os.path.join(root, "NOW.md"), "w").write(f"{title}\\n\\n## 2099-01-01 00:00 UTC · cycle {cyc}\\n- Did: x\\n"
                                              f"- Human: nothing\\n- Next: y\\n{rest}")
'''


def _fast(cwd: Path, *argv: str, hours: int = 3) -> subprocess.CompletedProcess[str]:
    """`argv` in `cwd` as Dana, on a clock `hours` ahead of the true one (every clock the process reads)."""
    assert FAKETIME is not None
    env = isolated_env(who=DANA)
    env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"      # timeouts and sleeps keep real time
    return subprocess.run([FAKETIME, "-f", f"+{hours}h", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)


def _fast_session(laptop: Path) -> None:
    """A human's interactive session on the fast laptop: log, NOW, the pre-commit check, commit, push."""
    for argv in ([str(GITMEM), "log", "add", "--task", "review the docs", "--outcome", "built",
                  "--result", "read them"],
                 [str(GITMEM), "now", "add", "--did", "reviewed the docs", "--human", "nothing", "--next", "more"],
                 [GIT, "add", "LOG.md", "NOW.md"],
                 [str(GITMEM), "check"],             # its own clock judges it: 3 h fast, the entry looks right
                 [GIT, "commit", "--quiet", "-m", "session: review the docs"],
                 [GIT, "push", "--quiet", "origin", "main"]):
        done = _fast(laptop, *argv)
        assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"


def _line_of(text: str, heading: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if line == heading)


@needs_faketime
def test_a_scheduled_cycle_after_a_fast_laptops_entry_commits_and_pushes_on_its_own_clock(
        tmp_path: Path, memrepo: GitRepo, cli) -> None:
    command_agent(tmp_path, memrepo, _FORGED, write_memory=False)
    origin = origin_and_clone(tmp_path, memrepo)
    laptop = clone(origin, tmp_path / "laptop")
    before_human = memrepo.head()
    _fast_session(laptop.path)
    git(memrepo.path, "pull", "--quiet", "--ff-only")          # the scheduled job checks out the newest main
    human = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert human.when.moment > datetime.now(UTC) + timedelta(hours=2)

    status = cli(["status"], cwd=memrepo.path)                 # the human is told their clock runs fast
    assert status.code == ExitCode.OK, status.err
    said = re.escape(f"LOG.md:{human.line}: LOG's newest entry is dated {human.when}, ")
    assert re.search(said + r"(2h 5[0-9]|3h 00)min ahead of this clock", status.out), status.out
    assert "NOW's top block is dated" in status.out

    start = datetime.now(UTC).replace(second=0, microsecond=0)
    result = cli(["cycle", "--push"], cwd=memrepo.path)
    end = datetime.now(UTC)
    assert result.code == ExitCode.OK, result.out + result.err
    assert result.code in CYCLE_EXIT_CODES
    assert f": GM310 the entry of cycle {human.cycle + 1} at " in result.err     # the skew, reported
    git(memrepo.path, "fetch", "--quiet", "origin")
    pushed = git(memrepo.path, "show", "origin/main:LOG.md")
    mine = log.parse(pushed).entries[-1]
    assert mine.cycle == human.cycle + 1 and mine.outcome == log.Outcome.BUILT      # the agent's work, built
    assert start <= mine.when.moment <= end                                        # the runner's clock
    assert [e.when.moment.year for e in log.parse(pushed).entries if e.when.moment.year == 2099] == []
    assert "restored the LOG entry's time" in (mine.get("Evidence") or "")
    block = now.parse(git(memrepo.path, "show", "origin/main:NOW.md")).top
    assert block is not None and block.cycle == mine.cycle and start <= block.when.moment <= end

    # The required check on the true clock: the fast entry is flagged by line, the cycle's commit is clean.
    flagged = cli(["verify", "--range", f"{before_human}..origin/main"], cwd=memrepo.path)
    assert flagged.code == ExitCode.VIOLATIONS
    line = _line_of(pushed, human.heading())
    assert f"LOG.md:{line}: GM309 the entry of cycle {human.cycle} is dated {human.when}" in flagged.out
    assert "after the clock of this verify" in flagged.out
    human_commit = git(memrepo.path, "rev-parse", "origin/main~1").strip()
    clean = cli(["verify", "--range", f"{human_commit}..origin/main"], cwd=memrepo.path)
    assert clean.code == ExitCode.OK, clean.out + clean.err
    assert ": GM310 warning: " in clean.out and ": GM309 " not in clean.out   # the skew is reported, not refused


@needs_faketime
def test_a_fast_commit_is_flagged_by_the_verifying_clock_not_only_by_its_own_date(
        tmp_path: Path, memrepo: GitRepo, cli) -> None:
    """The commit's own date is 3 h fast too, so the committer date alone cannot catch it."""
    origin = origin_and_clone(tmp_path, memrepo)
    laptop = clone(origin, tmp_path / "laptop")
    start = memrepo.head()
    _fast_session(laptop.path)
    git(memrepo.path, "pull", "--quiet", "--ff-only")
    found = verify_range(memrepo.ws(), start, "HEAD").violations
    text = memrepo.read("LOG.md")
    entry = log.parse(text).entries[-1]
    block = now.parse(memrepo.read("NOW.md")).top
    assert block is not None
    assert sorted((v.path, v.line, v.code) for v in found) == [("LOG.md", entry.line, "GM309"),
                                                               ("NOW.md", block.line, "GM309")]
    assert all("after the clock of this verify" in v.message for v in found)


def test_check_refuses_a_session_entry_dated_2099_and_verify_names_its_line(memrepo: GitRepo, cli) -> None:
    """An agent in an interactive session writes LOG by hand with a guessed date: pre-commit refuses it; pushed
    past the hook (--no-verify, a web edit), the required check names the line."""
    memrepo.commit_files({"LOG.md": LOG_BASE}, "base")
    start = memrepo.head()
    forged = LOG_BASE + log_entry(10, 2).replace("2026-11-30", "2099-11-30")
    memrepo.stage_files({"LOG.md": forged})
    line = _line_of(forged, "## 2099-11-30 10:00 UTC · cycle 2 · built")
    refused = cli(["check"], cwd=memrepo.path)
    assert refused.code == ExitCode.VIOLATIONS
    assert refused.lines[0].startswith(f"LOG.md:{line}: GM309 the entry of cycle 2 is dated 2099-11-30 10:00 UTC, ")
    assert "after the clock (" in refused.lines[0]
    memrepo.commit("by hand, past the hook")
    found = [(v.path, v.line, v.code) for v in verify_range(memrepo.ws(), start, "HEAD").violations]
    assert found == [("LOG.md", line, "GM309")]


def test_the_runner_dates_an_agents_2099_entry_after_an_entry_from_the_future(memrepo: GitRepo) -> None:
    """In process, with the runner's clock injected: the last entry is 3 h ahead of it; the cycle commits the
    agent's 2099 entry and NOW block at the runner's time, exit 0, and its commit verifies."""
    from tests.support.hostile import FixedClock, cycle, evidence

    clock = FixedClock(datetime.now(UTC).replace(second=0, microsecond=0))
    ahead = clock.moment + timedelta(hours=3)
    stamp = f"{ahead:%Y-%m-%d %H:%M} UTC"
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + f"\n## {stamp} · cycle 1 · built\n- Task: t\n"
                                                              "- Result: r\n- Session: interactive\n",
                          "NOW.md": now_md(f"## {stamp} · cycle 1\n- Did: d\n- Human: nothing\n- Next: n\n")},
                         "a session on a fast laptop", author=DANA)
    start = memrepo.head()

    def act(root: Path, memory, request) -> None:
        with (root / "LOG.md").open("a", encoding="utf-8") as handle:
            handle.write(f"\n## 2099-01-01 00:00 UTC · cycle {request.cycle} · built\n- Task: forged\n"
                         "- Result: done\n")
        text = (root / "NOW.md").read_text(encoding="utf-8")
        title, _, rest = text.partition("\n")
        (root / "NOW.md").write_text(f"{title}\n\n## 2099-01-01 00:00 UTC · cycle {request.cycle}\n- Did: x\n"
                                     f"- Human: nothing\n- Next: y\n{rest}", encoding="utf-8")

    report = cycle(memrepo, act, clock=clock, finish=False)
    assert report.exit_code == ExitCode.OK, report.error
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    block = now.parse(memrepo.read("NOW.md")).top
    assert entry.cycle == 2 and entry.when.moment == clock.moment
    assert block is not None and block.cycle == 2 and block.when.moment == clock.moment
    assert "restored the LOG entry's time to the clock's" in evidence(memrepo)
    assert [v.code for v in verify_range(memrepo.ws(), start, "HEAD").violations] == ["GM310", "GM310"]


def _rules(repo: GitRepo, version: int) -> None:
    text = repo.read("gitmem.yaml").replace(f"rules_version: {codes.RULES_VERSION}", f"rules_version: {version}")
    repo.commit_files({"gitmem.yaml": text}, f"rules {version}")


def test_history_made_under_rules_3_keeps_its_old_judgement(memrepo: GitRepo) -> None:
    """Under rules 3 a time going back is still GM302 (and GM103 in NOW), and an entry ahead of its commit is
    not GM309: history that verified before the upgrade verifies the same after it."""
    _rules(memrepo, 3)
    memrepo.commit_files({"LOG.md": LOG_BASE, "NOW.md": now_md(now_block(9, 1))}, "base")
    start = memrepo.head()
    memrepo.commit_files({"LOG.md": LOG_BASE + log_entry(10, 2).replace("2026-11-30", "2099-11-30"),
                          "NOW.md": now_md(now_block(10, 2).replace("2026-11-30", "2099-11-30"), now_block(9, 1))},
                         "ahead, under rules 3")
    assert verify_range(memrepo.ws(), start, "HEAD").violations == []
    middle = memrepo.head()
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + log_entry(11, 3),
                          "NOW.md": now_md(now_block(11, 3), now_block(10, 2).replace("2026-11-30", "2099-11-30"),
                                           now_block(9, 1))}, "back, under rules 3")
    found = [(v.path, v.code) for v in verify_range(memrepo.ws(), middle, "HEAD").violations]
    assert found == [("LOG.md", "GM302"), ("NOW.md", "GM103")]


def test_the_same_backwards_step_under_rules_4_is_a_warning_that_names_the_skew(memrepo: GitRepo, cli) -> None:
    base = LOG_BASE + log_entry(12, 2)
    memrepo.commit_files({"LOG.md": base, "NOW.md": now_md(now_block(12, 2))}, "base")
    start = memrepo.head()
    within = log_entry(12, 3).replace("12:00", "11:55")            # inside CLOCK_SKEW: nothing to say
    memrepo.stage_files({"LOG.md": base + within})
    assert (cli(["check"], cwd=memrepo.path).out, memrepo.read("LOG.md").count("11:55")) == ("", 1)
    memrepo.stage_files({"LOG.md": base + log_entry(9, 3), "NOW.md": now_md(now_block(9, 3), now_block(12, 2))})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.out
    line = _line_of(base + log_entry(9, 3), f"## {TS.format(9)} · cycle 3 · built")
    assert [entry.split(" ", 3)[:3] for entry in result.lines] == [[f"LOG.md:{line}:", "GM310", "warning:"],
                                                                   ["NOW.md:3:", "GM310", "warning:"]]
    assert f"at {TS.format(9)} is 3h 00min earlier than the entry of cycle 2 it follows" in result.lines[0]
    memrepo.commit("a slow clock, or the one before was fast")
    assert [(v.code, v.is_error) for v in verify_range(memrepo.ws(), start, "HEAD").violations] == \
           [("GM310", False), ("GM310", False)]


def test_the_runners_merge_keeps_a_cycle_that_follows_an_entry_from_the_future() -> None:
    """Pushing over a fast writer's entry: the runner's entry follows it (by position), and its NOW block goes
    on top, whatever the times say."""
    from gitmem.publish.merge import merge_log, merge_now

    base = LOG_BASE
    upstream = base + log_entry(23, 2)                                   # 23:00, a fast clock
    ours = base + log_entry(20, 3)
    assert merge_log(base, upstream, ours) == upstream + log_entry(20, 3)
    merged = merge_now(now_md(now_block(9, 1)), now_md(now_block(23, 2), now_block(9, 1)),
                       now_md(now_block(20, 3), now_block(9, 1)))
    assert merged is not None
    assert [b.cycle for b in now.parse(merged).blocks] == [3, 2, 1]


def test_ci_installs_libfaketime_next_to_bubblewrap() -> None:
    text = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    assert "command -v faketime" in text and "apt-get install -y -qq faketime" in text


_ASKED_2099 = ("## Pending\n\n### D-0001 · Forever fresh?\n- Asked: 2099-01-01 00:00 UTC (cycle 1)\n"
               "- Recommendation: no\n")
_LESSON_2099 = ("\n## L-0001 · From the future\n- Happened: 2099-01-01 (cycle 1) — it broke\n- Why: w\n- Change: c\n"
                "- Confirmed: 2099-01-02 (cycle 2) — held\n")


def test_check_refuses_a_decision_or_lesson_dated_ahead_and_verify_names_the_line(memrepo: GitRepo, cli) -> None:
    """A session's hand-written `Asked: 2099-…` hid its decision from every stale report, and a lesson's day
    from the future stood as written: GM730 holds them to the clocks GM309 holds LOG to (rules 5)."""
    start = memrepo.head()
    decisions_text = memrepo.read("DECISIONS.md").replace("## Pending\n", _ASKED_2099, 1)
    lessons_text = memrepo.read("LESSONS.md") + _LESSON_2099
    memrepo.stage_files({"DECISIONS.md": decisions_text, "LESSONS.md": lessons_text})
    refused = cli(["check"], cwd=memrepo.path)
    assert refused.code == ExitCode.VIOLATIONS
    asked = _line_of(decisions_text, "- Asked: 2099-01-01 00:00 UTC (cycle 1)")
    happened = _line_of(lessons_text, "- Happened: 2099-01-01 (cycle 1) — it broke")
    assert [line.split(" ")[:2] for line in refused.lines] == [
        [f"DECISIONS.md:{asked}:", "GM730"], [f"LESSONS.md:{happened}:", "GM730"],
        [f"LESSONS.md:{happened + 3}:", "GM730"]]
    assert "D-0001's Asked time is dated 2099-01-01 00:00 UTC, after the clock (" in refused.lines[0]
    memrepo.commit("by hand, past the hook")
    found = [(v.path, v.line, v.code) for v in verify_range(memrepo.ws(), start, "HEAD").violations]
    assert found == [("DECISIONS.md", asked, "GM730"), ("LESSONS.md", happened, "GM730"),
                     ("LESSONS.md", happened + 3, "GM730")]
    # The next change is judged on what it adds: the old lines are history, and a day in the past is fine.
    later = memrepo.head()
    memrepo.commit_files({"LESSONS.md": lessons_text + "\n## L-0002 · Earlier\n- Happened: 2026-01-05 (cycle 1) — "
                                                       "it broke\n- Why: w\n- Change: c\n"}, "a lesson from January")
    assert verify_range(memrepo.ws(), later, "HEAD").violations == []


def test_a_day_ahead_only_in_another_zone_is_not_ahead(memrepo: GitRepo, cli) -> None:
    """A lesson's day is a calendar day somewhere: tomorrow's date is today in Kiribati (UTC+14)."""
    tomorrow = (datetime.now(UTC) + timedelta(hours=14)).date()
    memrepo.stage_files({"LESSONS.md": memrepo.read("LESSONS.md") + f"\n## L-0001 · East\n- Happened: "
                                                                    f"{tomorrow} (cycle 1) — it broke\n- Why: w\n"
                                                                    "- Change: c\n"})
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK


def test_a_decision_dated_ahead_under_rules_4_keeps_its_old_judgement(memrepo: GitRepo) -> None:
    _rules(memrepo, 4)
    start = memrepo.head()
    memrepo.commit_files({"DECISIONS.md": memrepo.read("DECISIONS.md").replace("## Pending\n", _ASKED_2099, 1),
                          "LESSONS.md": memrepo.read("LESSONS.md") + _LESSON_2099}, "ahead, under rules 4")
    assert verify_range(memrepo.ws(), start, "HEAD").violations == []
