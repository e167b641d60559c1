"""Memory that does not pass its check as it stands (a DECISIONS, LESSONS, RULES or NOW format error committed with
`--no-verify`, or by a hand merge) makes every cycle refuse to start, and `gitmem status` says so. The close wrote
"Problems: none" over such a memory: the one report a human reads each day hid the reason nothing was built. It
now writes it up first in Problems, with the first error, how many more, and what to run."""
from __future__ import annotations

import subprocess
from pathlib import Path

from gitmem.checks.sizes import size_limits
from gitmem.close.day_report import EntryShape
from gitmem.close.run import run_close
from gitmem.secrets import MASK
from gitmem.views.health import invalid_memory
from gitmem.workspace import Workspace
from tests.support.world import World, at, d, last_entry

BROKEN_DECISION = "### D-12 broken heading\n- Asked: whenever\n"
TOKEN = "ghp_" + "A1b2C3d4" * 5


def _break(world: World, role: str, addition: str) -> None:
    """Commit `addition` at the end of a memory file past the hooks, as `git commit --no-verify` does."""
    path = world.path(role)
    world.git.commit_files({path: world.read(path) + "\n" + addition}, f"{path} edited by hand (--no-verify)")


def _committed_only_its_report(world: World, before: str, *more: str) -> None:
    """The close committed its entry and plan (and the `more` roles it writes: a Rule 0 lesson), touched no other
    file, and left nothing uncommitted (the broken file stays the human's to fix: `World.assert_valid` would judge
    it too)."""
    changed = subprocess.run(["git", "diff", "--name-only", before, "HEAD"], cwd=world.git.path, check=True,
                             capture_output=True, text=True).stdout.split()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=world.git.path, check=True,
                           capture_output=True, text=True).stdout
    assert sorted(changed) == sorted(world.path(role) for role in ("log", "now", *more)) and dirty == ""


def _problems(world: World) -> list[str]:
    return (last_entry(world.read("LOG.md")).get("Problems") or "").split("\n")


def test_a_decisions_error_committed_past_the_hooks_is_the_first_problem_of_the_close(world: World) -> None:
    for hour in (8, 9, 10):
        world.cycle(at(10, hour), "no-build")                       # a Rule 0 streak: the close's own write-up
    _break(world, "decisions", BROKEN_DECISION)
    before = world.git.head()
    [error] = invalid_memory(Workspace.at(world.git.path, world.config))     # what `gitmem status` lists

    result = world.close(d(10), at(10, 23))

    first = _problems(world)[0]
    assert first == (f"memory does not pass its check: {error.path}:{error.line}: {error.code} {error.message}; "
                     "cycles refuse to start until it is fixed: run `gitmem status`")
    assert error.code == "GM208" and error.path == world.path("decisions")
    # First in the list, before the Rule 0 write-up and the cycles' own lines.
    assert result.problems[0] == first and _problems(world)[1].startswith("Rule 0: cycles 1–3")
    assert "cycle 1 built nothing" in _problems(world)[2]
    _committed_only_its_report(world, before, "lessons")


def test_a_day_without_cycles_still_says_the_memory_is_invalid(world: World) -> None:
    world.cycle(at(9, 9))
    world.close(d(9), at(9, 23))
    _break(world, "decisions", BROKEN_DECISION)
    world.close(d(10), at(10, 23))
    entry = last_entry(world.read("LOG.md"))
    assert entry.get("Cycles") == "no cycles ran on 2026-11-10"
    assert (entry.get("Problems") or "").startswith("memory does not pass its check: DECISIONS.md:")


def test_many_errors_are_counted_after_the_first(world: World) -> None:
    world.cycle(at(10, 9))
    _break(world, "decisions", "".join(f"### D-{n} broken heading {n}\n- Asked: whenever\n\n" for n in range(5)))
    _break(world, "lessons", "## L-9 a broken lesson heading\n- Happened: never\n")
    found = invalid_memory(Workspace.at(world.git.path, world.config))
    assert len(found) >= 6
    world.close(d(10), at(10, 23))
    first = _problems(world)[0]
    assert first.startswith(f"memory does not pass its check: {found[0].path}:{found[0].line}: {found[0].code} ")
    assert f" (and {len(found) - 1} more); cycles refuse to start until it is fixed: run `gitmem status`" in first


def test_the_line_fits_its_share_of_the_entry_and_keeps_what_to_do(world: World) -> None:
    """A heading of thousands of characters is quoted by the error's message: the line is cut to a list line's
    share, and the count and the fix survive the cut."""
    world.cycle(at(10, 9))
    _break(world, "decisions", "### D-1 " + "very long " * 400 + "\n- Asked: whenever\n\n### D-2 another\n")
    world.close(d(10), at(10, 23))
    first = _problems(world)[0]
    shape = EntryShape.within(size_limits(world.config).log_entry)
    assert len(first) <= shape.chars // 3
    assert first.startswith("memory does not pass its check: DECISIONS.md:")
    assert first.endswith(" (and 1 more); cycles refuse to start until it is fixed: run `gitmem status`")


def test_a_secret_in_the_quoted_error_is_masked(world: World) -> None:
    world.cycle(at(10, 9))
    _break(world, "decisions", f"### D-12 deploy with {TOKEN}\n- Asked: whenever\n")
    before = world.git.head()
    world.close(d(10), at(10, 23))
    first = _problems(world)[0]
    assert first.startswith("memory does not pass its check: DECISIONS.md:") and MASK in first
    assert TOKEN not in world.read("LOG.md").split("· close", 1)[1]
    _committed_only_its_report(world, before)


def test_a_valid_memory_writes_no_such_line(world: World) -> None:
    world.cycle(at(10, 9), "no-build")
    world.close(d(10), at(10, 23))
    assert not any(line.startswith("memory does not pass") for line in _problems(world))


def test_the_close_command_reports_it(world: World, cli) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI, as the acceptance rehearsal ran it: `gitmem close --no-llm` over a DECISIONS committed
    with --no-verify."""
    world.cycle(at(10, 9))
    _break(world, "decisions", BROKEN_DECISION)
    shown = cli(["close", "--no-llm", "--date", "2026-11-10"], cwd=Path(world.git.path))
    assert shown.code == 0, shown.out + shown.err
    assert _problems(world)[0].startswith("memory does not pass its check: DECISIONS.md:")


def test_a_close_catching_up_days_writes_it_up_in_its_latest_report_only(world: World) -> None:
    """Memory as it stands is the close's news, like its promotions: an earlier day's report is as of that day."""
    world.cycle(at(9, 9))
    world.cycle(at(10, 9))
    world.commit("two days of cycles")
    _break(world, "decisions", BROKEN_DECISION)
    world.clock.moment = at(10, 23)
    world.reload()
    result = run_close(Workspace.at(world.git.path, world.config), clock=world.clock)
    assert result.days == ["2026-11-09", "2026-11-10"]
    earlier, latest = result.reports
    assert "memory does not pass its check" not in (earlier.get("Problems") or "")
    assert latest["Problems"].startswith("memory does not pass its check: DECISIONS.md:")
