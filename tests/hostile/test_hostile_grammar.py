"""Hostile input, class 2b: what counts as a number and as an address. Only ASCII digits are digits in every
grammar (Python's `\\d` and int() read `٣` as 3), and emails are compared as git records them; both are rules
version 3, so history written under 2 still verifies. A repository written under rules 2 (0.2.0) verifies clean."""
from __future__ import annotations

import pytest

from gitmem import codes
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.builders import decisions_md, lesson, lessons_md, pending, resolved, rules_md
from tests.support.gitcli import git
from tests.support.helpers import AGENT, HUMAN, GitRepo
from tests.support.world import World, at, d

ARABIC_INDIC = "٠١٢٣٤٥٦٧٨٩"
FULLWIDTH = "０１２３４５６７８９"


def _unicode(number: str, digits: str) -> str:
    return "".join(digits[int(c)] for c in number)


def _headings(cycle: int) -> dict[str, str]:
    return {
        "cycle-arabic": f"## 2026-12-01 09:00 UTC · cycle {_unicode(str(cycle), ARABIC_INDIC)} · built",
        "cycle-fullwidth": f"## 2026-12-01 09:00 UTC · cycle {_unicode(str(cycle), FULLWIDTH)} · built",
        "year-arabic": f"## {_unicode('2026', ARABIC_INDIC)}-12-01 09:00 UTC · cycle {cycle} · built",
        "zone-devanagari": f"## 2026-12-01 09:00 +{_unicode('01', '०१२३४५६७८९')}:00 · cycle {cycle} · built",
    }


def _rules_2(repo: GitRepo) -> None:
    text = repo.read("gitmem.yaml").replace(f"rules_version: {codes.RULES_VERSION}", "rules_version: 2")
    repo.commit_files({"gitmem.yaml": text}, "a repository of 0.2.0")


def _with_heading(repo: GitRepo, heading: str) -> str:
    return repo.read("LOG.md") + f"\n{heading}\n- Task: t\n- Result: r\n"


@pytest.mark.parametrize("kind", sorted(_headings(1)))
def test_a_heading_with_other_digits_is_refused_and_never_read_as_a_number(memrepo: GitRepo, cli, kind: str) -> None:
    heading = _headings(1)[kind]
    memrepo.stage_files({"LOG.md": _with_heading(memrepo, heading)})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS and "Traceback" not in result.err
    assert "GM306" in result.out and "digits other than 0-9" in result.out
    assert log.parse(memrepo.read("LOG.md")).entries == ()      # no reader takes it for an entry
    memrepo.commit_files({"LOG.md": _with_heading(memrepo, heading)}, "by hand", author=HUMAN)
    status = cli(["status", "--json"], cwd=memrepo.path)
    assert status.code == ExitCode.OK, status.err
    assert '"last_cycle": 1' not in status.out and "Traceback" not in status.err


@pytest.mark.parametrize("kind", sorted(_headings(1)))
def test_history_written_under_rules_2_with_such_headings_still_verifies(memrepo: GitRepo, cli, kind: str) -> None:
    _rules_2(memrepo)
    start = memrepo.head()
    memrepo.commit_files({"LOG.md": _with_heading(memrepo, _headings(1)[kind])}, "by hand under 0.2.0")
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path).code == ExitCode.OK
    marked = memrepo.head()
    memrepo.commit_files({"LOG.md": _with_heading(memrepo, _headings(2)[kind])},
                         f"under the new rules\n\nGitmem-Rules: {codes.RULES_VERSION}\n")
    found = cli(["verify", "--range", f"{marked}..HEAD"], cwd=memrepo.path)
    assert found.code == ExitCode.VIOLATIONS and "GM306" in found.out


def _arabic(text: str) -> str:
    return "".join(ARABIC_INDIC[int(c)] if c.isdigit() else c for c in text)


# Every grammar rule outside headings whose verdict changed when `\\d` became `[0-9]`: each file as a 0.2.0 writer
# (or a human) could have left it, with digits other than 0-9 where that grammar reads a number, and its code.
_FIELDS = {
    "confirmation-cycle": ({"LESSONS.md": lessons_md(lesson(1, confirmed=f"- Confirmed: 2026-12-01 (cycle "
                                                                         f"{_arabic('4')}) — held\n"))}, "GM403"),
    "confirmation-time": ({"LESSONS.md": lessons_md(lesson(1, confirmed=f"- Confirmed: 2026-12-01 {_arabic('09:30')}"
                                                                        " UTC (cycle 4) — held\n"))}, "GM403"),
    "happened-cycle": ({"LESSONS.md": lessons_md(lesson(1).replace("(cycle 3)", f"(cycle {_arabic('3')})"))},
                       "GM402"),
    "status-promoted": ({"LESSONS.md": lessons_md(lesson(1, status=f"promoted R-{_arabic('01')}")),
                         "RULES.md": rules_md("- R-01 · Read the clock (from L-0001; cycles 4, 5)\n")}, "GM404"),
    "rule-id": ({"RULES.md": rules_md(f"- R-{_arabic('01')} · Read the clock (human)\n")}, "GM506"),
    "rule-cycles": ({"LESSONS.md": lessons_md(lesson(1)),
                     "RULES.md": rules_md(f"- R-01 · Read the clock (from L-0001; cycles {_arabic('4')}, 5)\n")},
                    "GM506"),
    "rule-retired-on": ({"RULES.md": rules_md(retired=f"- R-02 · Guess (retired on {_arabic('2026')}-11-01: gone)\n")},
                        "GM506"),
    "rule-superseded": ({"RULES.md": rules_md(retired=f"- R-02 · Guess (superseded by R-{_arabic('01')} on "
                                                      "2026-11-01)\n")}, "GM506"),
    "asked": ({"DECISIONS.md": decisions_md(pending(1).replace("09:00", _arabic("09:00")))}, "GM203"),
    "answered": ({"DECISIONS.md": decisions_md(resolved=resolved(1).replace("12:00", _arabic("12:00")))}, "GM204"),
}


@pytest.mark.parametrize("kind", sorted(_FIELDS))
def test_a_field_or_rule_line_with_other_digits_is_a_rules_3_problem(memrepo: GitRepo, cli, kind: str) -> None:
    """Written under rules 2 such a line read as its number, so the history verifies clean; a commit made under
    rules 3 is held to the code's `digits` variant."""
    files, code = _FIELDS[kind]
    _rules_2(memrepo)
    start = memrepo.head()
    memrepo.commit_files(files, "by hand under 0.2.0")
    old = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert old.code == ExitCode.OK and "Traceback" not in old.err, old.out + old.err
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("rules_version: 2", "rules_version: 3")},
                         "upgrade")
    marked = memrepo.head()
    memrepo.commit_files({rel: text + "\n" for rel, text in files.items()}, "under the new rules")
    new = cli(["verify", "--range", f"{marked}..HEAD"], cwd=memrepo.path)
    assert new.code == ExitCode.VIOLATIONS and "Traceback" not in new.err, new.out + new.err
    assert code in new.out and "digits other than 0-9" in new.out, new.out
    staged = cli(["check", "--worktree"], cwd=memrepo.path)       # `check` judges with every rule
    assert staged.code == ExitCode.VIOLATIONS and code in staged.out


def test_a_line_that_never_read_as_a_number_stays_a_rules_1_problem() -> None:
    """A date a lesson line holds went through date.fromisoformat, which reads only 0-9: under 0.2.0 it was as
    malformed as it is now, so it keeps the variant of the first rules."""
    from gitmem.checks.lessons_checks import lesson_rules
    from gitmem.memory import lessons

    for confirmed, generation in ((f"2026-12-01 (cycle {_arabic('4')})", 3), (f"{_arabic('2026')}-12-01 (cycle 4)", 1),
                                  (f"2026-{_arabic('12')}-01 {_arabic('09:30')} UTC (cycle 4)", 1)):
        doc = lessons.parse(lessons_md(lesson(1, confirmed=f"- Confirmed: {confirmed} — held\n")))
        found = [v for v in lesson_rules("LESSONS.md", doc.lessons[0]) if v.code == "GM403"]
        assert [v.generation for v in found] == [generation], confirmed


@pytest.mark.parametrize("email", [" agent@gitmem.invalid", "agent@gitmem.invalid ", "\tagent@gitmem.invalid",
                                   "<agent@gitmem.invalid>", "agent@gitmem.invalid.", "'agent@gitmem.invalid'",
                                   " AGENT@Gitmem.Invalid"])
def test_an_agent_email_git_trims_is_the_agent(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch,
                                               email: str) -> None:
    memrepo.commit_files({"DECISIONS.md": decisions_md(pending(1))}, "ask")
    memrepo.stage_files({"DECISIONS.md": decisions_md(resolved=resolved(1))})
    monkeypatch.setenv("GIT_AUTHOR_NAME", AGENT[0])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", email)
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS and "GM207" in result.out, result.out + result.err
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK          # a human answers


def test_an_answer_with_a_trimmed_agent_email_under_rules_2_still_verifies(memrepo: GitRepo, cli) -> None:
    from gitmem.checks.decisions_checks import against_old
    from gitmem.memory import decisions

    old, new = decisions.parse(decisions_md(pending(1))), decisions.parse(decisions_md(resolved=resolved(1)))
    found = against_old("DECISIONS.md", old, new, agent_email=AGENT[1], author_email=AGENT[1], variant="normalised")
    assert [v.generation for v in found] == [3]
    found = against_old("DECISIONS.md", old, new, agent_email=AGENT[1], author_email=AGENT[1])
    assert [v.generation for v in found] == [1]


def test_a_repository_written_under_rules_2_verifies_clean(memrepo: GitRepo, cli) -> None:
    """The current writers at rules_version 2, as 0.2.0 left a repository: cycles, a decision, a close."""
    _rules_2(memrepo)
    start = memrepo.head()
    world = World(memrepo)
    for hour in (8, 9, 10):
        world.cycle(at(10, hour))
    world.ask(at(10, 11), "Which database?")
    world.close(d(10), at(10, 23))
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.out + result.err
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == ExitCode.OK


def test_a_repository_of_two_workspaces_written_under_rules_2_verifies_clean(memrepo: GitRepo, cli) -> None:
    """The same with a second workspace: in each, cycles, a decision the human answers, a lesson confirmed by a
    later cycle and a close; `verify` with no flag checks every workspace, over the whole range."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  w2:\n    memory_dir: w2\n")
    made = cli(["init", "."], cwd=memrepo.path)
    assert made.code == ExitCode.OK, made.err
    memrepo.stage(*[p.relative_to(memrepo.path).as_posix() for p in (memrepo.path / "w2").rglob("*") if p.is_file()])
    memrepo.commit("a second workspace, w2")
    _rules_2(memrepo)
    start = memrepo.head()
    for workspace, day in ((None, 10), ("w2", 11)):
        world = World(memrepo, workspace=workspace)
        world.cycle(at(day, 8))
        asked = world.ask(at(day, 8, 30), "Which database?")
        lesson_id = world.lesson(at(day, 8, 40), "Guessed the schema")
        world.answer(at(day, 9), asked, "Postgres")
        for hour in (10, 11):
            world.cycle(at(day, hour))
            world.confirm(at(day, hour, 10), lesson_id)
        world.close(d(day), at(day, 23))
        assert world.path("log").startswith("w2/" if workspace else "LOG")
    log_w2 = memrepo.read("w2/LOG.md")
    assert "· close" in log_w2 and "· close" in memrepo.read("LOG.md")
    assert "Postgres" in memrepo.read("w2/DECISIONS.md") and "Confirmed" in memrepo.read("w2/LESSONS.md")
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.out + result.err
    root = git(memrepo.path, "rev-list", "--max-parents=0", "HEAD").strip()
    everything = cli(["verify", "--range", f"{root}..HEAD"], cwd=memrepo.path)     # all history, every workspace
    assert everything.code == ExitCode.OK, everything.out + everything.err
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == ExitCode.OK
    clean = memrepo.head()                    # and w2 is judged: a rewritten w2 LOG under rules 2 is GM301
    memrepo.commit_files({"w2/LOG.md": log_w2.replace("# LOG", "# LOG\n\nrewritten", 1)}, "rewrite w2's LOG")
    broken = cli(["verify", "--range", f"{clean}..HEAD"], cwd=memrepo.path)
    assert broken.code == ExitCode.VIOLATIONS and "w2/LOG.md" in broken.out and "GM301" in broken.out
