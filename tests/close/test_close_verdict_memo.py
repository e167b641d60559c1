"""A close judges the confirmations of the lessons that changed since the last one, not of every lesson (issue 31:
3,119 lines re-judged per close at 100x), and writes byte for byte what judging every line writes.

The verdicts kept for the next close (gitmem.close.verdict_memo) live outside the repository; a copy of the
repository at another path has none, so the close there judges every line as before: the two closes are the
old and the new behaviour on one history.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitmem.close import CloseResult, backing
from gitmem.memory import lessons
from tests.support.helpers import GitRepo, counting
from tests.support.world import World, at, d

LESSONS = 10
CLAIM = "- Confirmed: 2026-11-10 (cycle 3) — claimed before cycle 3 ran"


@pytest.fixture
def world(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> World:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))       # no verdict kept from another run
    return World(memrepo)


def _judgements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each (lesson, line) the history judges from here on (`Backing._judge`, the judging function)."""
    judged: list[tuple[str, str]] = []
    real = backing.Backing._judge

    def counted(self: backing.Backing, commit: Any, lesson: lessons.Lesson, item: Any, **kwargs: Any) -> Any:
        judged.append((lesson.id, item.value))
        return real(self, commit, lesson, item, **kwargs)

    monkeypatch.setattr(backing.Backing, "_judge", counted)
    return judged


def _hopeful_lessons(world: World) -> list[str]:
    """LESSONS lessons from cycle 1, each confirmed in cycle 2 and claimed for cycle 3 by a human's commit made
    before cycle 3 ran: two Confirmed lines each, one of them unbacked, so every close asks about all of them
    and promotes none (as most of the 1,333 lessons a 100x close asks about)."""
    world.cycle(at(10, 8))
    ids = [world.lesson(at(10, 8, 10 + i), f"Lesson {i}", rule=f"Rule number {i}.") for i in range(LESSONS)]
    world.cycle(at(10, 9))
    for i, lesson in enumerate(ids):
        world.confirm(at(10, 9, 10 + i), lesson)
    text = world.read("LESSONS.md").replace("- Status: open", f"{CLAIM}\n- Status: open")
    world.git.commit_files({"LESSONS.md": text}, "claims")
    world.cycle(at(10, 10))
    return ids


def _lines() -> int:
    return LESSONS * 2


def _changes_since_the_close(world: World, ids: list[str]) -> None:
    """The next day: a cycle confirms the first lesson again (it becomes eligible) and the human edits the
    second one's Why (its confirmations no longer confirm what it says)."""
    world.cycle(at(11, 9))
    world.confirm(at(11, 9, 30), ids[0])
    text = world.read("LESSONS.md")
    head = f"## {ids[1]} · Lesson 1\n"
    section = text[text.index(head):]
    edited = section.replace("- Why: a reason", "- Why: another reason", 1)
    world.git.commit_files({"LESSONS.md": text.replace(section, edited)}, "a better why")


def _outcome(world: World, result: CloseResult) -> dict[str, object]:
    """What a close writes and says: its entries, report, problems and promotions, and every memory file."""
    files = {name: (world.git.path / name).read_bytes() for name in ("LOG.md", "NOW.md", "LESSONS.md", "RULES.md",
                                                                      "DECISIONS.md")}
    return {"reports": result.reports, "problems": result.problems, "promoted": result.promoted,
            "not_promoted": result.not_promoted, "message": result.message, "plan": result.plan, **files}


def _copy(world: World, where: Path) -> World:
    shutil.copytree(world.git.path, where, symlinks=True)
    return World(GitRepo(where, pygit2.Repository(str(where))))


def test_a_close_where_nothing_changed_judges_no_confirmation_again(world: World,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _hopeful_lessons(world)
    judged = _judgements(monkeypatch)
    first = world.close(d(10), at(10, 23))
    assert len(judged) == _lines()
    assert first.promoted == []
    del judged[:]
    world.cycle(at(11, 9))                  # a day of work that changed no lesson

    second = world.close(d(11), at(11, 23))

    assert judged == []
    assert second.not_promoted == first.not_promoted and len(second.not_promoted) == LESSONS


def test_a_close_judges_only_the_changed_lessons_and_writes_what_judging_all_writes(
        world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ids = _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    _changes_since_the_close(world, ids)
    old = _copy(world, tmp_path / "elsewhere")          # another work tree: no verdict kept for it
    judged = _judgements(monkeypatch)

    new_result = world.close(d(11), at(11, 23))
    new_judged = list(judged)
    del judged[:]
    old_result = old.close(d(11), at(11, 23))

    changed = {ids[0]: 3, ids[1]: 2}                   # their Confirmed lines
    assert {lesson for lesson, _ in new_judged} <= set(changed)
    assert len(new_judged) <= sum(changed.values())
    assert len(judged) == _lines() + 1                   # judging every line, as every close did before
    assert [p["lesson"] for p in new_result.promoted] == [ids[0]]
    assert any(f"{ids[1]}'s Why changed after it" in line for line in new_result.problems), new_result.problems
    assert _outcome(world, new_result) == _outcome(old, old_result)


def test_a_rewritten_log_or_history_has_every_line_judged_again(world: World,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept verdict stands on the LOG it was judged on and on the history it was judged in: LOG rewritten
    (committed past the check), or HEAD moved off that history, and every line is judged again."""
    _hopeful_lessons(world)
    before = world.git.head()
    world.close(d(10), at(10, 23))
    judged = _judgements(monkeypatch)
    world.cycle(at(11, 9))
    world.close(d(11), at(11, 23))
    assert judged == []

    world.git.commit_files({"LOG.md": world.read("LOG.md").replace("task at 10 08:00", "task at 10 08:01", 1)},
                           "an old entry rewritten")
    world.close(d(12), at(12, 23))
    assert len(judged) == _lines()

    del judged[:]
    pygit2.Repository(str(world.git.path)).reset(pygit2.Oid(hex=before), pygit2.enums.ResetMode.HARD)
    world.git.commit_files({"NOW.md": world.read("NOW.md") + "\n"}, "history goes on another way")
    world.close(d(13), at(13, 23))
    assert len(judged) == _lines()


def test_the_memo_keeps_a_verdict_a_string_read_only_for_the_lines_asked_and_judges_a_mangled_one_again(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept verdict is one string (a few JSON nodes to load for 3,000 lines at 100x, not five a line), taken
    apart only for the line asked about; one of another shape is no verdict: its line is judged again, and it is
    not written back."""
    import json

    from gitmem.close import verdict_memo
    from gitmem.workspace.proofs import proofs_file

    _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    where = proofs_file(world.git.path, verdict_memo.kind_of(("LESSONS.md", "LOG.md")))
    memo = json.loads(where.read_text(encoding="utf-8"))
    kept = memo["verdicts"]
    assert len(kept) == _lines() and all(isinstance(value, str) for value in kept.values()), kept
    first, *_ = sorted(kept)
    kept[first] = kept[first].replace(" 1 ", " yes ", 1).replace(" 0 ", " no ", 1)
    where.write_text(json.dumps(memo), encoding="utf-8")
    taken = counting(monkeypatch, verdict_memo, "_entry")
    loaded = verdict_memo.VerdictMemo(world.git.path, ("LESSONS.md", "LOG.md"))
    assert taken == []                                  # nothing taken apart before a line is asked about
    judged = _judgements(monkeypatch)
    world.cycle(at(11, 9))

    world.close(d(11), at(11, 23))

    assert len(judged) == 1, judged
    again = json.loads(where.read_text(encoding="utf-8"))["verdicts"]
    assert sorted(again) == sorted(kept) and again[first] != kept[first]
    assert loaded.find(first, "0" * 40, "0" * 40, in_history=lambda _: True, log=lambda: b"") is None
    # The mangled line reads as no verdict at all (so it was judged again), where the line it came from read as one.
    assert verdict_memo._entry(kept[first]) is None and verdict_memo._entry(again[first]) is not None


def test_a_seal_leaves_the_kept_verdicts_standing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo was proven against LOG.md's first bytes, which a seal moves into a volume: every 200 cycles the
    next close judged every line again. It is proven against LOG's history, the volumes sealed since put back
    before LOG.md; a memo whose volumes are not HEAD's first ones (another history) is still never trusted."""
    import json

    from gitmem.close import verdict_memo
    from gitmem.memory import log
    from gitmem.memory.timestamps import Timestamp
    from gitmem.workspace.proofs import proofs_file

    _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    filler = "".join(f"\n{log.make_entry(Timestamp.from_datetime(at(11, 0, n % 60)), cycle=n, outcome='built', fields={'Task': f't{n}', 'Result': f'r{n}'}).render()}\n"  # noqa: E501
                     for n in range(4, 400))
    world.git.commit_files({"LOG.md": world.read("LOG.md") + filler}, "a long day of cycles")
    judged = _judgements(monkeypatch)
    world.cycle(at(11, 9))
    world.close(d(11), at(11, 23))                            # its entry is past the 400th: it seals
    assert (world.git.path / "history" / "LOG-0001.md").exists() and "cycle 1 ·" not in world.read("LOG.md")
    assert judged == []
    world.cycle(at(12, 9))

    world.close(d(12), at(12, 23))                            # on LOG.md as the seal left it

    assert judged == []
    where = proofs_file(world.git.path, verdict_memo.kind_of(("LESSONS.md", "LOG.md")))
    memo = json.loads(where.read_text(encoding="utf-8"))
    memo["volumes"] = ["0" * 40]                              # names a volume HEAD never held
    where.write_text(json.dumps(memo), encoding="utf-8")
    world.cycle(at(13, 9))
    world.close(d(13), at(13, 23))
    assert len(judged) == _lines()


def _gates_judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from gitmem.close import gates

    judged: list[str] = []
    real = gates.gate

    def counted(lesson: lessons.Lesson, *args: Any) -> Any:
        judged.append(lesson.id)
        return real(lesson, *args)

    monkeypatch.setattr(gates, "gate", counted)
    return judged


def test_a_close_where_no_lesson_changed_judges_no_gate_again_and_says_what_judging_all_says(
        world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The gates' outcome of a lesson is kept beside its lines' verdicts (1,333 lessons gated on every close at
    100x, most of them eligible and waiting for room in RULES): a close after a day that changed no lesson judges
    no gate, and writes byte for byte what a close that judges every gate writes (a copy elsewhere, no memo)."""
    _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    world.cycle(at(11, 9))
    old = _copy(world, tmp_path / "elsewhere")
    gated = _gates_judged(monkeypatch)

    new_result = world.close(d(11), at(11, 23))
    new_gated = list(gated)
    del gated[:]
    old_result = old.close(d(11), at(11, 23))

    assert new_gated == []
    assert len(gated) == LESSONS                                 # every hopeful lesson, as every close did before
    assert len(new_result.not_promoted) == LESSONS
    assert _outcome(world, new_result) == _outcome(old, old_result)


def test_a_kept_gate_holds_only_while_its_lesson_and_every_verdict_it_stands_on_do(
        world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A lesson changed since (a confirmation added, its Why edited) is gated again, and so is one whose line the
    cache in `.git/gitmem` (the agent's to write) now says another commit added, or whose kept gate or verdict is
    mangled; the others are read back. What the close writes is what judging every gate writes."""
    import json

    from gitmem.close import verdict_memo
    from gitmem.workspace.proofs import proofs_file
    from gitmem.workspace.statedir import CONFIRMATIONS_CACHE

    ids = _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    digests = {verdict_memo.content_digest(item.content()): item.id
               for item in lessons.parse(world.read("LESSONS.md")).lessons}
    _changes_since_the_close(world, ids)
    state = world.git.ws().state_dir
    assert state is not None
    cache_file = state / CONFIRMATIONS_CACHE
    cache = json.loads(cache_file.read_text(encoding="utf-8"))
    where = proofs_file(world.git.path, verdict_memo.kind_of(("LESSONS.md", "LOG.md")))
    memo = json.loads(where.read_text(encoding="utf-8"))
    assert all(isinstance(value, str) for value in memo["gates"].values())     # one JSON node a lesson
    by_lesson = {digests[digest]: (digest, [line.split(":") for line in value.split("\n")[0].split(" ")[2].split(",")])
                 for digest, value in memo["gates"].items()}
    assert sorted(by_lesson) == sorted(ids)
    planted_key = by_lesson[ids[2]][1][0][0]
    cache["verdicts"][planted_key] = "0" * 40                    # a commit that added nothing
    cache_file.write_text(json.dumps(cache), encoding="utf-8")
    shape = memo["gates"][by_lesson[ids[3]][0]].split(" ", 2)
    memo["gates"][by_lesson[ids[3]][0]] = " ".join([shape[0], "not-cycles", shape[2]])         # another shape
    mangled = by_lesson[ids[4]][1][1][0]                         # a verdict of another shape
    memo["verdicts"][mangled] = memo["verdicts"][mangled].replace(" 1 ", " yes ", 1).replace(" 0 ", " no ", 1)
    where.write_text(json.dumps(memo), encoding="utf-8")
    old = _copy(world, tmp_path / "elsewhere")
    gated = _gates_judged(monkeypatch)

    new_result = world.close(d(11), at(11, 23))
    new_gated = list(gated)
    del gated[:]
    old_result = old.close(d(11), at(11, 23))

    assert sorted(new_gated) == sorted(ids[:5])
    assert len(gated) == LESSONS
    assert [p["lesson"] for p in new_result.promoted] == [ids[0]]
    assert _outcome(world, new_result) == _outcome(old, old_result)


def test_the_memo_saved_twice_in_one_process_still_holds(world: World) -> None:
    """The verdicts are saved after the history is asked, and again with the gates judged on them: the second save
    proves the same LOG (its hash was taken over LOG's tail twice, and the next close trusted no verdict)."""
    from gitmem.close import verdict_memo

    _hopeful_lessons(world)
    head = world.git.head()
    log_bytes = (world.git.path / "LOG.md").read_bytes()
    paths = ("LESSONS.md", "LOG.md")
    memo = verdict_memo.VerdictMemo(world.git.path, paths)
    memo.keep("a" * 40, "b" * 40, head, True, "")
    for _ in range(2):
        memo.save(head, in_history=lambda _: True, log=lambda: log_bytes)

    again = verdict_memo.VerdictMemo(world.git.path, paths)

    assert again.find("a" * 40, "b" * 40, head, in_history=lambda _: True, log=lambda: log_bytes) is not None


def _memo_file(world: World) -> Path:
    from gitmem.close import verdict_memo
    from gitmem.workspace.proofs import proofs_file

    return proofs_file(world.git.path, verdict_memo.kind_of(("LESSONS.md", "LOG.md")))


def _gate_of(world: World, lesson_id: str) -> str:
    """The digest the memo keeps `lesson_id`'s gate by."""
    from gitmem.close import verdict_memo

    lesson = lessons.parse(world.read("LESSONS.md")).find(lesson_id)
    assert lesson is not None
    return verdict_memo.content_digest(lesson.content())


def test_a_planted_eligible_gate_promotes_nothing_and_only_the_lessons_planned_are_judged_again(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo lives outside `.git/gitmem`, yet the agent (the same user, the sandbox off) can write it: a gate
    it plants as eligible, on the verdicts kept, gets its lesson planned for promotion, which judges the gate in
    this process, and the lesson is not promoted. Only the lessons planned are judged; the others are read back."""
    import json

    ids = _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    where = _memo_file(world)
    memo = json.loads(where.read_text(encoding="utf-8"))
    for planted in ids[2:4]:
        needed, _, judged = memo["gates"][_gate_of(world, planted)].split("\n")[0].split(" ")
        memo["gates"][_gate_of(world, planted)] = f"{needed} 2,3 {judged}\n"     # eligible, every line counting
    where.write_text(json.dumps(memo), encoding="utf-8")
    world.cycle(at(11, 9))
    gated = _gates_judged(monkeypatch)

    result = world.close(d(11), at(11, 23))

    assert result.promoted == []
    assert sorted(gated) == sorted(ids[2:4])
    assert f"{ids[2]} · Lesson 2: not eligible, 1 of 2 confirmations count" in result.not_promoted


def test_only_the_lessons_promoted_are_judged_again_not_those_waiting(world: World,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Seven eligible lessons, three promotions a close: the next close reads back the four waiting gates and
    judges the three it promotes, not the one left waiting."""
    ids = world.eligible_lessons(7)
    first = world.close(d(10), at(10, 23))
    assert [p["lesson"] for p in first.promoted] == ids[:3]
    world.cycle(at(11, 9))
    gated = _gates_judged(monkeypatch)

    second = world.close(d(11), at(11, 23))

    assert [p["lesson"] for p in second.promoted] == ids[3:6]
    assert gated == ids[3:6]


def test_gates_kept_by_other_gating_rules_are_judged_again(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo whose gates another version of the gating rules judged (an upgrade changed `gates.gate`), or that
    names none (written before they were versioned), has every hopeful lesson judged again."""
    import json

    _hopeful_lessons(world)
    world.close(d(10), at(10, 23))
    where = _memo_file(world)
    memo = json.loads(where.read_text(encoding="utf-8"))
    assert memo["gates"]
    gated = _gates_judged(monkeypatch)
    for version in ("0" * 40, None):
        if version is None:
            memo.pop("gates_version")
        else:
            memo["gates_version"] = version
        where.write_text(json.dumps(memo), encoding="utf-8")
        world.cycle(at(11 if version else 12, 9))
        world.close(d(11 if version else 12), at(11 if version else 12, 23))
        assert len(gated) == LESSONS
        del gated[:]
    world.cycle(at(13, 9))
    world.close(d(13), at(13, 23))
    assert gated == []                     # judged by these rules, and kept so


def test_a_kept_gate_names_the_line_where_it_stands_now(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson blocked by a Confirmed line that names no cycle says which line of LESSONS it is: after a lesson
    above it grows by a line, the gate read back names the line where it stands now."""
    ids = _hopeful_lessons(world)
    text = world.read("LESSONS.md")
    head = f"## {ids[3]} · Lesson 3\n"
    section = text[text.index(head):]
    world.git.commit_files({"LESSONS.md": text.replace(section, section.replace(CLAIM, "- Confirmed: it held", 1))},
                           "a claim with no cycle")
    world.close(d(10), at(10, 23))
    text = world.read("LESSONS.md")
    head = f"## {ids[1]} · Lesson 1\n"
    section = text[text.index(head):]
    grown = section.replace("- Why: a reason", "- Why: a reason\n  that takes a second line", 1)
    world.git.commit_files({"LESSONS.md": text.replace(section, grown)}, "a longer why")
    world.cycle(at(11, 9))
    gated = _gates_judged(monkeypatch)

    result = world.close(d(11), at(11, 23))

    line = world.read("LESSONS.md").splitlines().index("- Confirmed: it held") + 1
    assert ids[3] not in gated
    assert f"{ids[3]} · Lesson 3: not eligible, the Confirmed line at line {line} names no cycle" \
        in result.not_promoted, result.not_promoted
