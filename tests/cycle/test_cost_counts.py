"""What a cycle costs is counted, not timed (issue 31): the work that grows with history (hashing a file git
already knows, walking commits already checked) is held to what the cycle reads, so it can't creep back."""
from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gitmem import gitio
from gitmem.close.day import entries_since
from gitmem.close.writeup import blocked_tasks
from gitmem.cycle.runner import run_cycle
from gitmem.memory import decisions, log
from gitmem.memory.timestamps import Timestamp
from gitmem.workspace import Workspace
from tests.support.helpers import BodiesRead, GitRepo, bodies_read


def stat_dirty(root: str) -> list[str]:
    """The tracked files whose index entry lacks the work tree's stat data: every status hashes them whole
    again (`git diff-files` compares stat data only, and lists them)."""
    out = subprocess.run(["git", "diff-files", "--name-only"], cwd=root, check=True, capture_output=True, text=True)
    return out.stdout.split()


def test_a_commit_leaves_the_index_knowing_the_files_it_committed(memrepo: GitRepo) -> None:
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\nsome words a cycle wrote\n")
    gitio.commit_worktree(ws.repo, ["LOG.md"], "a cycle's commit", author=gitio.Identity("A", "a@example.com"))
    assert stat_dirty(str(memrepo.path)) == []
    assert subprocess.run(["git", "status", "--porcelain"], cwd=memrepo.path, capture_output=True, text=True,
                          check=True).stdout == ""


def test_a_commit_never_stages_what_the_work_tree_holds_instead(memrepo: GitRepo) -> None:
    """The stat refresh only records that a file holds its entry's bytes: bytes committed from elsewhere than
    the work tree leave the work tree's file modified, and the index equal to HEAD."""
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\nthe human's unsaved words\n")
    log_bytes = (memrepo.path / "LOG.md").read_bytes()
    gitio.commit_files(ws.repo, {"LOG.md": log_bytes + b"\nonly in the commit\n"}, "a commit",
                       author=gitio.Identity("A", "a@example.com"))
    assert stat_dirty(str(memrepo.path)) == ["LOG.md"]
    diff = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=memrepo.path, capture_output=True,
                          text=True, check=True).stdout
    assert diff == ""


def test_a_cycle_leaves_no_file_for_the_next_one_to_hash_again(memrepo: GitRepo) -> None:
    from tests.support.cycle_support import WritingBackend, built

    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    assert stat_dirty(str(memrepo.path)) == []



def bytes_read() -> int:
    """What this process has read through system calls so far, as the kernel counts it."""
    with open("/proc/self/io", encoding="ascii") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("rchar:"))


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="the kernel's count of bytes read is Linux's")
def test_a_commit_reads_each_file_it_commits_once(memrepo: GitRepo) -> None:
    """The index learns the stat data of a committed file from the read that took its bytes: nothing reads the
    file again to hash it (a 75 MB LOG and a 10 MB NOW at 100x), and git's own status finds it current."""
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\n" + "a line of a long history\n" * 200_000)
    size = (memrepo.path / "LOG.md").stat().st_size
    gitio.head_id(ws.repo)
    before = bytes_read()
    gitio.commit_worktree(ws.repo, ["LOG.md"], "a cycle's commit", author=gitio.Identity("A", "a@example.com"))
    assert bytes_read() - before < 1.5 * size
    assert stat_dirty(str(memrepo.path)) == []
    assert subprocess.run(["git", "status", "--porcelain"], cwd=memrepo.path, capture_output=True, text=True,
                          check=True).stdout == ""


def test_a_file_written_again_after_its_commit_is_not_taken_for_committed(memrepo: GitRepo) -> None:
    """The stat an entry gets is the one its bytes were read with: a later write shows as a change."""
    ws = memrepo.ws()
    memrepo.append("LOG.md", "\nsome words a cycle wrote\n")
    gitio.commit_worktree(ws.repo, ["LOG.md"], "a cycle's commit", author=gitio.Identity("A", "a@example.com"))
    memrepo.append("LOG.md", "\nwords written after the commit\n")
    assert stat_dirty(str(memrepo.path)) == ["LOG.md"]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=memrepo.path, capture_output=True, text=True,
                          check=True).stdout == " M LOG.md\n"


def test_the_close_tells_its_changed_files_without_reading_heads_blobs(memrepo: GitRepo) -> None:
    """A file of another size than HEAD's blob has changed; one of the same size is compared by its blob id.
    HEAD's LOG (75 MB at 100x) is never inflated to compare it with the work tree's."""
    import base64

    from gitmem.close import commit_guard

    memrepo.write("LOG.md", memrepo.read("LOG.md") + base64.b64encode(os.urandom(3_000_000)).decode() + "\n")
    memrepo.stage("LOG.md")
    memrepo.commit("a long LOG")
    memrepo.append("LOG.md", "\nthe close's entry\n")
    ws = memrepo.ws()
    head = gitio.head_id(ws.repo)
    assert head is not None
    size = (memrepo.path / "LOG.md").stat().st_size
    before = bytes_read()
    changed = commit_guard.changed_files(ws, head)
    assert bytes_read() - before < 1.3 * size
    assert list(changed) == ["LOG.md"] and changed["LOG.md"] == (memrepo.path / "LOG.md").read_bytes()
    assert commit_guard.changed_with_stats(ws, head)[1]["LOG.md"].st_size == size
    memrepo.write("NOW.md", memrepo.read("NOW.md").replace("#", "%", 1))     # same size, other bytes
    assert sorted(commit_guard.changed_files(ws, head)) == ["LOG.md", "NOW.md"]


def test_the_close_judges_an_appended_log_without_decoding_it(memrepo: GitRepo,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The close's permission check takes an append to LOG, as `check` judges it, from the bytes: neither side
    of LOG is decoded whole again (75 MB each at 100x)."""
    from gitmem.close import commit_guard

    ws, head = log_appended_after_commit(memrepo)
    decoded: list[int] = []
    real = commit_guard.decode_file_text

    def counted(data: bytes) -> str:
        decoded.append(len(data))
        return real(data)

    monkeypatch.setattr(commit_guard, "decode_file_text", counted)
    commit_guard.check_result(ws, head, commit_guard.changed_files(ws, head))
    assert len(log_of(40)) not in decoded and len(log_of(41)) not in decoded


def test_the_close_asks_history_about_each_commit_once(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many Confirmed lines added by one commit cost the lookups of that commit, not theirs each: a close at 100x
    asks about thousands of lines (and the parents of consecutive commits are the same commits again)."""
    from gitmem.close.backing import Backing
    from gitmem.memory import lessons

    sections = []
    for n in range(1, 21):
        sections.append("\n".join([f"## L-{n:04d} · Lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke",
                                    "- Why: no tests", "- Change: run them", "- Rule: Run the tests.",
                                    "- Confirmed: 2026-11-10 (cycle 2) — held",
                                    "- Confirmed: 2026-11-10 (cycle 3) — held", "- Status: open", ""]))
    memrepo.commit_files({"LESSONS.md": "# LESSONS\n\n" + "\n".join(sections)}, "lessons by hand")
    asked: list[tuple[str, str]] = []
    real = gitio.file_id_at

    def counted(repo: Any, commit_id: str, path: str) -> Any:
        asked.append((commit_id, path))
        return real(repo, commit_id, path)

    monkeypatch.setattr(gitio, "file_id_at", counted)
    doc = lessons.parse(memrepo.read("LESSONS.md"))
    wanted = [(lesson, item) for lesson in doc.lessons for item, _ in lesson.confirmations]
    assert len(wanted) == 40
    Backing(memrepo.ws()).resolve(wanted)
    assert len(asked) == len(set(asked)) and len(asked) <= 4, asked


def test_an_append_to_log_leaves_the_next_reader_its_fence_count(memrepo: GitRepo,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """After this process appends an entry, the fences before the old end are the ones it counted: the next
    append (the close writes one a day when it catches up) counts only what was added since, not LOG from its
    first byte again (75 MB each time at 100x)."""
    from gitmem.memory_writer import MemoryWriter
    from gitmem.workspace import head_and_tail

    memrepo.write("LOG.md", log_of(60))
    memrepo.stage("LOG.md")
    memrepo.commit("sixty cycles")
    memory = MemoryWriter(memrepo.ws())
    history_end = (memrepo.path / "LOG.md").stat().st_size
    memory.add_log_entry(task="the first", outcome="built", result="done")
    first_end = (memrepo.path / "LOG.md").stat().st_size
    memrepo.stage("LOG.md")
    memrepo.commit("the first entry")
    spans: list[tuple[int, int]] = []
    real = head_and_tail._fence_lines

    def counted(handle: Any, start: int, end: int) -> int:
        spans.append((start, end))
        return real(handle, start, end)

    monkeypatch.setattr(head_and_tail, "_fence_lines", counted)
    memory.add_log_entry(task="the second", outcome="built", result="done")
    # Counted from where the first append began at the earliest: the sixty cycles before it are never read again.
    assert spans and all(start >= history_end for start, _ in spans), (history_end, first_end, spans)

# -- the close: what waits on a decision is found without parsing the LOG since it was asked -------------------

def log_appended_after_commit(memrepo: GitRepo) -> tuple[Workspace, str]:
    """A LOG of forty cycles committed and a forty-first appended in the work tree, as a close finds LOG before
    its commit; the workspace and HEAD."""
    memrepo.write("LOG.md", log_of(40))
    memrepo.stage("LOG.md")
    memrepo.commit("forty cycles")
    memrepo.write("LOG.md", log_of(41))
    ws = memrepo.ws()
    head = gitio.head_id(ws.repo)
    assert head is not None
    return ws, head


def log_of(count: int, *, blocked_at: tuple[int, ...] = ()) -> str:
    """A LOG of `count` cycles, one an hour from 2026-01-01, those in `blocked_at` blocked on D-0001."""
    from gitmem.memory.fields import render_field
    from gitmem.memory.log import LogEntry, Outcome, append_entry
    from gitmem.memory.timestamps import Timestamp

    text = "# LOG\n"
    for n in range(1, count + 1):
        moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=n)
        body = [*render_field("Task", f"task {n}"), *render_field("Result", f"result {n}")]
        if n in blocked_at:
            body += render_field("Blocked", "D-0001")
        text = append_entry(text, LogEntry(Timestamp.from_datetime(moment), n, Outcome.BUILT, tuple(body)))
    return text


def waiting_since(day: int) -> tuple[decisions.Waiting, ...]:
    asked = Timestamp.from_datetime(datetime(2026, 1, day, tzinfo=UTC))
    return (decisions.Waiting("D-0001", "a question", "yes", asked, 1, 30.0),)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the LOG texts parsed, however a caller reaches the parser."""
    sizes: list[int] = []
    real = log.parse

    def counted(text: str, **kwargs: Any) -> log.LogDoc:
        sizes.append(len(text))
        return real(text, **kwargs)

    monkeypatch.setattr(log, "parse", counted)
    return sizes


def test_a_decision_waiting_a_month_costs_the_close_no_parse_of_the_month(parses: list[int]) -> None:
    text = log_of(24 * 40)
    as_of = datetime(2026, 2, 10, tzinfo=UTC)
    assert blocked_tasks(text, waiting_since(2), as_of) == {}
    assert parses == []


def test_the_tasks_blocked_on_a_waiting_decision_are_still_found(parses: list[int]) -> None:
    # Cycle 5 is before the ask (2 Jan 00:00 is cycle 24), 30 and 700 after it; 960 is after `as_of`.
    text = log_of(24 * 40, blocked_at=(5, 30, 700, 959))
    as_of = datetime(2026, 2, 9, 12, tzinfo=UTC)
    # What reading the entries back to the ask finds (entries_since: the whole tail parsed).
    expected: dict[str, list[str]] = {}
    for entry in entries_since(text, datetime(2026, 1, 2, tzinfo=UTC)):
        if entry.when.moment < as_of and "D-0001" in entry.blocked_by:
            expected.setdefault("D-0001", []).append(entry.get("Task") or "")
    assert expected["D-0001"][-2:] == ["task 30", "task 700"]
    parses.clear()
    assert blocked_tasks(text, waiting_since(2), as_of) == expected
    assert len(parses) == 1


def test_the_last_entries_of_log_are_parsed_once_per_block_read(parses: list[int]) -> None:
    """`tail_entries` parses each block it reads once: the block that is enough is the answer, not parsed a
    second time for its line numbers (every cycle, check and close reads LOG's tail several times)."""
    text = log_of(24 * 40)
    whole = log.parse(text).entries
    parses.clear()
    tail = log.tail_entries(log.TextSource(text), lambda entries: len(entries) >= 3)
    assert len(parses) == 1 and parses[0] < len(text) // 4             # one block of a long LOG, parsed once
    assert [(e.line, e.end, e.cycle) for e in tail.entries] == [(e.line, e.end, e.cycle)
                                                                for e in whole[-len(tail.entries):]]
    parses.clear()
    tail = log.tail_entries(log.TextSource(text), lambda entries: len(entries) >= 200, block=1024)
    assert len(tail.entries) >= 200 and len(parses) == len(set(parses))    # growing blocks, each parsed once
    assert [(e.line, e.cycle) for e in tail.entries] == [(e.line, e.cycle) for e in whole[-len(tail.entries):]]


def test_a_whole_now_judged_at_once_reads_logs_tail_once_and_still_finds_a_skipped_cycle(
        memrepo: GitRepo, parses: list[int]) -> None:
    """GM105 on a NOW judged whole (a first commit, a full check): every block is new, and LOG's tail is read
    back once for all of them, not once per block (quadratic: a minute of CPU at 1x)."""
    from gitmem.checks import CheckInput, cycle_numbers
    from gitmem.memory import now

    count = 24 * 10
    entries = log_of(count).split("\n\n## ")
    heading = f"cycle {count // 2} · built"
    skipped = next(i for i, part in enumerate(entries) if part.split("\n", 1)[0].endswith(heading))
    log_text = "\n\n## ".join(entries[:skipped] + entries[skipped + 1:])     # LOG has no entry for that cycle
    now_text = "# NOW\n"
    for n in range(1, count + 1):
        moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=n, minutes=30)
        now_text = now.prepend_block(now_text, now.make_block(Timestamp.from_datetime(moment), did=f"did {n}",
                                                              human="nothing", next=f"next {n + 1}", cycle=n))
    memrepo.commit_files({"LOG.md": log_text, "NOW.md": now_text}, "a long history in one commit")
    ws = memrepo.ws()
    snapshot = gitio.commit_snapshot(ws.repo, gitio.head_id(ws.repo), ws.config.memory_paths().values())
    parses.clear()
    found = cycle_numbers.check(CheckInput(ws.config, None, snapshot), set())
    assert [(v.code, v.line) for v in found] == [("GM105", now.parse(now_text).blocks[count - count // 2].line)]
    assert len(parses) < 20                   # the tail's doubling blocks, each parsed once: not one read a block


def test_a_now_block_for_the_cycle_just_logged_reads_logs_tail_once(memrepo: GitRepo, parses: list[int]) -> None:
    """GM105 on the usual commit (a cycle's LOG entry and its NOW block): the read that finds LOG's last cycle
    already reaches the cycle before the block's, so LOG's tail is parsed once, not again to list the cycles
    logged (a `gitmem check` on the pre-commit path parsed the same 16 KB twice). A block for a cycle LOG
    skipped is still found by reading further back."""
    from gitmem.checks import CheckInput, cycle_numbers
    from gitmem.memory import now

    count = 24 * 40                                   # about 70 KB, its last 4 KB about 50 cycles
    log_text = log_of(count)
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=count, minutes=30)

    def block(cycle: int) -> now.NowBlock:
        return now.make_block(Timestamp.from_datetime(moment), did="did", human="nothing", next="next",
                              cycle=cycle)

    memrepo.commit_files({"LOG.md": log_text, "NOW.md": "# NOW\n"}, "a long LOG")
    ws = memrepo.ws()
    old = gitio.commit_snapshot(ws.repo, gitio.head_id(ws.repo), ws.config.memory_paths().values())
    for cycle, read_back in ((count, False), (count // 4, True)):
        memrepo.commit_files({"NOW.md": now.prepend_block("# NOW\n", block(cycle))}, f"NOW for cycle {cycle}")
        new = gitio.commit_snapshot(ws.repo, gitio.head_id(ws.repo), ws.config.memory_paths().values())
        parses.clear()
        assert cycle_numbers.check(CheckInput(ws.config, old, new), set()) == []
        assert (len(parses) > 1) is read_back, (cycle, parses)
        # the first read is a last-entry block: a few entries, not 16 KB of them
        assert parses[0] <= log.LAST_ENTRY_BLOCK < log.FIRST_BLOCK, parses


def test_a_check_of_a_staged_cycle_parses_only_the_last_entries_of_a_long_log(memrepo: GitRepo, cli,
                                                                              parses: list[int]) -> None:
    """The pre-commit path reads LOG's last entries in last-entry blocks (4 KB, a few entries), for the cycle
    above the appended entry and for the last cycle NOW may name: never a 16 KB block of forty entries."""
    from gitmem.checks.check_and_verify import check_staged
    from tests.support.gitcli import git

    memrepo.commit_files({"LOG.md": log_of(24 * 40)}, "a long LOG")
    for argv in (["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
                 ["now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == 0, result.err
    git(memrepo.path, "add", "-A")
    parses.clear()
    assert check_staged(memrepo.ws()) == []
    assert parses and max(parses) <= log.LAST_ENTRY_BLOCK, parses


# -- LOG's standing scan: what was found plain is not scanned again ---------------------------------------------

def test_a_log_found_plain_is_judged_again_by_what_was_appended() -> None:
    from gitmem.checks import amendments

    text = log_of(50).encode()
    assert amendments.plain(text)
    bad = text + b"\n## yesterday \xc2\xb7 cycle 51 \xc2\xb7 built\n- Task: t\n"
    assert not amendments.plain(bad)
    assert not amendments.plain(text + b"\n## 2026-01-03 02:00 UTC \xc2\xb7 amends line 3 \xc2\xb7 cycle 51\n")
    assert amendments.plain(text + log_of(51)[len(log_of(50)):].encode())
    # A LOG that is not the one found plain with more at its end is scanned whole.
    assert not amendments.plain(b"# LOG\n\n## not a heading\n" + text[6:])


def test_a_log_found_plain_is_not_scanned_again_for_an_appended_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.checks import amendments

    scanned: list[int] = []
    real = amendments._ODD_LINE

    class Counted:
        def search(self, data: bytes) -> re.Match[bytes] | None:
            scanned.append(len(data))
            return real.search(data)

    monkeypatch.setattr(amendments, "_ODD_LINE", Counted())
    history, longer = log_of(400).encode(), log_of(401).encode()
    assert amendments.plain(history)
    scanned.clear()
    assert amendments.plain(longer)
    assert scanned and max(scanned) < 2 * (len(longer) - len(history))


# -- checks of texts in hand: a file nobody changed is skipped by its bytes ---------------------------------------

def test_a_file_with_the_same_bytes_on_both_sides_is_skipped_without_a_blob_id(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close judges its files together from texts in hand (no blob ids): a NOW it did not change is not
    parsed, whatever its size; a NOW it changed is judged."""
    from gitmem.checks import CheckInput, run_checks
    from gitmem.gitio.snapshots import Snapshot, same_blob
    from gitmem.memory import now

    ws = memrepo.ws()
    current = {path: (memrepo.path / path).read_bytes()
               for path in ("NOW.md", "LOG.md", "DECISIONS.md", "LESSONS.md", "RULES.md")}
    before, after = Snapshot.from_dict("current", current), Snapshot.from_dict("proposed", dict(current))
    assert same_blob(before, after, "NOW.md")
    parsed: list[int] = []
    real = now.parse.__wrapped__        # type: ignore[attr-defined]

    def counted(text: str, **kwargs: Any) -> now.NowDoc:
        parsed.append(len(text))
        return real(text, **kwargs)   # type: ignore[no-any-return]

    monkeypatch.setattr(now, "parse", counted)
    assert [v for v in run_checks(CheckInput(ws.config, before, after, None)) if v.is_error] == []
    assert parsed == []
    changed = Snapshot.from_dict("proposed", {**current, "NOW.md": current["NOW.md"] + b"\n## not a block\n"})
    assert not same_blob(before, changed, "NOW.md")
    assert any(v.path == "NOW.md" for v in run_checks(CheckInput(ws.config, before, changed, None)))


def test_a_cycle_whose_agent_left_log_and_now_alone_writes_them_only_to_add_its_own(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner puts back what the agent changed; a file it left alone is not rewritten (at 100x a 75 MB LOG
    and a 10 MB NOW, each hashed again by every status after a rewrite)."""
    from gitmem.confined import files
    from tests.support.cycle_support import WritingBackend, built

    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    rewritten: list[str] = []
    real = files.write_bytes

    def counted(root: Any, rel: str, data: bytes, *args: Any, **kwargs: Any) -> Any:
        rewritten.append(rel)
        return real(root, rel, data, *args, **kwargs)

    monkeypatch.setattr(files, "write_bytes", counted)
    report = run_cycle(memrepo.ws(), WritingBackend(lambda memory, request: None))
    assert report.commit and report.exit_code == 0
    assert "LOG.md" not in rewritten and rewritten.count("NOW.md") == 1, rewritten     # its block on top
    assert stat_dirty(str(memrepo.path)) == []


def test_a_cycle_never_inflates_the_log_it_started_from(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks after the agent take the start's LOG as a prefix of the work tree's, proven by one hash
    (gitmem.gitio.blobproof): at 100x the blob is 75 MB. Every size counts as big here."""
    from gitmem.gitio import blobproof, snapshots
    from tests.support.cycle_support import WritingBackend, built

    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    monkeypatch.setattr(blobproof, "MIN_SIZE", 0)
    inflated: list[str] = []
    real = snapshots.Snapshot.read

    def counted(self: snapshots.Snapshot, path: str) -> bytes | None:
        if type(self) is snapshots.Snapshot and self.label.startswith("commit") and path not in self._cache:
            inflated.append(path)
        return real(self, path)

    monkeypatch.setattr(snapshots.Snapshot, "read", counted)
    assert run_cycle(memrepo.ws(), WritingBackend(built("second"))).commit
    assert "LOG.md" not in inflated and "NOW.md" not in inflated, inflated


def test_the_close_parses_the_log_headings_of_the_cycles_it_asks_about_only(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A confirmation names a cycle; the close finds that cycle's heading in the current LOG. The lines that
    name cycles are found by one regex pass; only the asked cycles' headings are parsed, and a heading in a
    code fence is still none."""
    from gitmem.close import backing

    fenced = "```\n## 2026-01-01 00:30 UTC · cycle 40 · built\n```\n"
    (memrepo.path / "LOG.md").write_text(log_of(400).replace("- Result: result 3\n", "- Result: result 3\n" + fenced))
    parsed: list[str] = []
    real = log.parse_any_heading

    def counted(title: str) -> Any:
        parsed.append(title)
        return real(title)

    monkeypatch.setattr(log, "parse_any_heading", counted)
    found = backing.Backing(memrepo.ws())._live_text()
    text = (memrepo.path / "LOG.md").read_bytes()
    at = found.heading_offset(40)
    assert at is not None and text[at:].startswith(b"## 2026-01-02 16:00 UTC \xc2\xb7 cycle 40 ")
    assert found.heading_offset(401) is None
    assert len(parsed) <= 2, parsed


# -- the cycle's walks over history: only what came since the last cycle -----------------------------------------

def test_a_cycle_walks_only_the_commits_since_the_last_cycle(memrepo: GitRepo,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The preflight verifies the commits a cycle or close did not check (gitmem.checks.check_and_verify
    .check_since_checked), whatever lies below: the count of commits walked is what came since."""
    from gitmem.checks import check_and_verify
    from tests.support.cycle_support import WritingBackend, built

    for n in range(12):
        memrepo.commit_files({"notes.txt": f"note {n}\n"}, f"a human's note {n}")
    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    for n in range(3):
        memrepo.commit_files({"notes.txt": f"later note {n}\n"}, f"a later note {n}")
    walked: list[str] = []
    real = gitio.walk_range

    def counted(*args: Any, **kwargs: Any) -> Any:
        for commit in real(*args, **kwargs):
            walked.append(commit.id)
            yield commit

    monkeypatch.setattr(check_and_verify.gitio, "walk_range", counted)
    assert run_cycle(memrepo.ws(), WritingBackend(built("second"))).commit
    assert len(walked) == 3, walked


# -- a memory file read whole is not encoded again, and NOW's history is not split into lines ------------------

def test_a_text_read_from_a_file_is_compared_as_the_bytes_read(memrepo: GitRepo) -> None:
    """The settling steps compare LOG and NOW as bytes (an append, NOW grown on top, a file put back): a text
    this process decoded from a file is answered with the bytes it read, not encoded again (75 MB and 10 MB at
    100x, encoded four times per cycle before); a file that held a BOM or CRLF is not its text's encoding."""
    from gitmem.confined import files
    from gitmem.memory.decoding import decode_file_text, encoded

    memrepo.append("LOG.md", "\n" + "a line of a long history\n" * 1000)
    data = files.read_bytes(memrepo.path, "LOG.md")
    assert data is not None
    text = decode_file_text(data)
    assert encoded(text) is data
    assert encoded(files.read_text(memrepo.path, "LOG.md")) is data        # the same bytes read again: one text
    made = text + "more\n"
    assert encoded(made) == made.encode("utf-8")
    crlf = data.replace(b"\n", b"\r\n")
    assert encoded(decode_file_text(crlf)) == data and encoded(decode_file_text(b"\xef\xbb\xbf" + data)) == data


def now_of(count: int) -> str:
    from gitmem.memory import now

    text = "# NOW\n"
    for n in range(1, count + 1):
        moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=n, minutes=30)
        text = now.prepend_block(text, now.make_block(Timestamp.from_datetime(moment), did=f"did {n}",
                                                      human="nothing", next=f"next {n + 1}", cycle=n))
    return text


def test_nows_top_blocks_are_read_without_splitting_its_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader of NOW's top blocks (`max_blocks`: the standing check, the cycle's number, settling NOW) and a
    new block put on top split only the lines above the blocks below (NOW is 10 MB at 100x, split into lines by
    each of them before); what they find is what the whole text's lines give."""
    from gitmem.memory import now

    text = now_of(3000)
    split: list[int] = []
    real = now.decode_lines

    def counted(part: str) -> tuple[str, ...]:
        split.append(len(part))
        return real(part)

    monkeypatch.setattr(now, "decode_lines", counted)
    monkeypatch.setattr(now, "TOP_READ", 1024)           # the first prefix read, doubled until it holds enough
    top = now.parse(text, max_blocks=2)
    assert split and max(split) < len(text) // 10
    assert [(b.line, b.end, b.cycle) for b in top.blocks] == [(b.line, b.end, b.cycle)
                                                             for b in now.parse.__wrapped__(text).blocks[:2]]  # type: ignore[attr-defined]
    split.clear()
    block = now.make_block(Timestamp.from_datetime(datetime(2026, 6, 1, tzinfo=UTC)), did="d", human="h",
                           next="n", cycle=3001)
    longer = now.prepend_block(text, block)
    assert max(split) < len(text) // 10
    lines = text.split("\n")
    top_at = next(index for index, line in enumerate(lines) if line.startswith("## "))
    assert longer == "\n".join([*lines[:top_at], *block.render().split("\n"), "", *lines[top_at:]])


# -- the close: LESSONS' sections at each commit, and the decisions of each day it catches up -------------------

def lessons_of(count: int) -> bytes:
    sections = ["# LESSONS", "", "```", "## L-9999 · a fenced example, no heading", "```", ""]
    for n in range(1, count + 1):
        sections += [f"## L-{n:04d} · Lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke",
                     "- Rule: Run the tests.", "- Confirmed: 2026-11-10 (cycle 2) — held", "- Status: open", ""]
    return "\n".join(sections).encode()


def test_the_sections_of_a_lessons_blob_are_found_in_one_pass_over_its_fences(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The close finds a confirmation's lesson in LESSONS as each commit held it (3,000 lessons at 100x, at many
    commits): the fence lines are found once per blob, not counted again between each heading and the next."""
    from gitmem.close.backing import _LessonsBytes
    from gitmem.memory import fences

    data = lessons_of(300)
    counted: list[int] = []
    real = fences.count_marks

    def counting(text: Any, start: int = 0, end: int | None = None) -> int:
        counted.append(start)
        return real(text, start, end)

    monkeypatch.setattr(fences, "count_marks", counting)
    found = _LessonsBytes(data)
    assert found.span("L-9999") is None
    start, end = found.span("L-0150") or (0, 0)
    assert data[start:end].startswith(b"## L-0150 ") and data[end:].startswith(b"## L-0151 ")
    assert found.has("L-0150", b"- Confirmed: 2026-11-10 (cycle 2) \xe2\x80\x94 held")
    assert len(counted) < 5, len(counted)
    assert fences.every_heading(data, b"## ") == list(fences.headings(data, b"## "))


def test_a_close_catching_up_a_week_reads_each_decisions_times_once() -> None:
    """Which decisions waited is asked for each day a close catches up, of every decision (4,000 at 100x): each
    decision's Asked and Answered times are read from its lines once, not once per day."""
    from unittest import mock

    blocks = ["# DECISIONS", "", "## Pending", ""]
    for n in range(1, 41):
        blocks += [f"### D-{n:04d} · question {n}", "- Asked: 2026-01-01 10:00 UTC (cycle 1)",
                   "- Recommendation: yes", ""]
    blocks += ["## Resolved", ""]
    doc = decisions.parse("\n".join(blocks))
    assert len(doc.all) == 40
    with mock.patch.object(decisions, "_asked", wraps=decisions._asked) as asked:
        for day in range(2, 9):
            assert len(decisions.waiting(doc, datetime(2026, 1, day, tzinfo=UTC), as_of=True)) == 40
    assert asked.call_count == 40


def test_a_lessons_events_are_read_once_however_many_steps_ask() -> None:
    """The close's gates, its look into history for each line and the checks all ask a lesson for its Happened
    and Confirmed events (3,000 lessons at 100x): each line is parsed once per lesson; a caller that changes
    the list it gets changes nothing for the next one."""
    from unittest import mock

    from gitmem.memory import lessons

    doc = lessons.parse(lessons_of(5).decode())
    lesson = doc.lessons[0]
    with mock.patch.object(lessons, "parse_event", wraps=lessons.parse_event) as parsed:
        for _ in range(5):
            assert lesson.happened is not None and lesson.happened.cycle == 1
            got = lesson.confirmations
            assert [event.cycle for _, event in got if event is not None] == [2]
            got.clear()
    assert parsed.call_count == 2


class _CountingReader:
    """A file opened for reading whose whole reads of `size` bytes are counted."""

    def __init__(self, handle: Any, size: int, counted: list[int]) -> None:
        self._handle, self._size, self._counted = handle, size, counted

    def read(self, *args: Any) -> bytes:
        data = self._handle.read(*args)
        if len(data) == self._size:
            self._counted.append(len(data))
        return bytes(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def test_a_cycle_reads_the_settled_log_it_starts_from_once(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A LOG untouched since the last cycle is read whole once by the cycle's steps before it writes its entry
    (confined.files.read_bytes keeps a settled file's bytes): at 100x each read is 75 MB."""
    import time

    from gitmem.confined import files
    from tests.support.builders import log_entry
    from tests.support.cycle_support import WritingBackend, built

    filler = "".join(log_entry(cycle % 24, cycle).replace("- Result: ", "- Result: " + "long " * 100)
                     for cycle in range(1, 2_000))
    memrepo.append("LOG.md", filler)
    subprocess.run(["git", "commit", "-qam", "a long history"], cwd=memrepo.path, check=True)
    size = (memrepo.path / "LOG.md").stat().st_size
    assert size >= 1 << 20                  # a file worth keeping (files._SettledReads.FROM)
    time.sleep(2.1)                         # untouched since, as between two cycles (files.SETTLED_NS)
    whole_reads: list[int] = []
    real_fdopen = os.fdopen

    def counting_fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, *args, **kwargs)
        return _CountingReader(handle, size, whole_reads) if os.fstat(fd).st_size == size else handle

    monkeypatch.setattr(files.os, "fdopen", counting_fdopen)
    assert run_cycle(memrepo.ws(), WritingBackend(built("first"))).commit
    assert whole_reads == [size]
# -- parsing DECISIONS and LESSONS: what a reader asks for is what is read ---------------------------------------

def decisions_of(count: int, *, mark: str = "") -> str:
    blocks = ["# DECISIONS", "", "## Pending", ""]
    for n in range(1, count + 1):
        blocks += [f"### D-{n:04d} · question {n}{mark}", "- Asked: 2026-01-01 10:00 UTC (cycle 1)",
                   "- Context: c", "  more context", "- Recommendation: yes", ""]
    return "\n".join([*blocks, "## Resolved", ""])


@pytest.fixture
def fields_read(monkeypatch: pytest.MonkeyPatch) -> BodiesRead:
    """Every body whose fields are read, however a reader reaches them."""
    return bodies_read(monkeypatch)


def test_the_standing_check_reads_no_field_and_splits_no_file_into_lines(fields_read: BodiesRead,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle's preflight judges DECISIONS and LESSONS whole (1.7 MB and 3,000 lessons at 100x) by their
    headings and sections: no entry's fields are read for it, and no file is split into a tuple of lines to be
    decoded (NOW is 10 MB at 100x, and only its top blocks are parsed)."""
    from gitmem.checks.standing import standing
    from gitmem.config import Config
    from gitmem.memory import decoding

    split_into_lines: list[int] = []
    real = decoding._decode

    def counted(data: bytes, *, split: bool) -> decoding.Decoded:
        if split:
            split_into_lines.append(len(data))
        return real(data, split=split)

    monkeypatch.setattr(decoding, "_decode", counted)
    files = {"DECISIONS.md": decisions_of(40, mark=" (standing)").encode(),
             "LESSONS.md": lessons_of(40).replace(b"# LESSONS", b"# LESSONS (standing)", 1),
             "NOW.md": now_of(30).encode(), "LOG.md": log_of(3).encode(),
             "RULES.md": b"# RULES\n\n## Proven rules\n"}
    assert standing(Config(), files.get) == []
    assert fields_read.reads == [] and split_into_lines == []


def test_a_split_looks_only_at_the_lines_that_can_end_a_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections are split at the lines starting with `#` or a fence mark; the others (nearly all of a file) take
    no step of their own, and a deeper heading is passed over without being measured."""
    from gitmem.memory import sections

    measured: list[str] = []
    real = sections.heading_level

    def counted(line: str) -> int:
        measured.append(line)
        return real(line)

    monkeypatch.setattr(sections, "heading_level", counted)
    lines = decisions_of(200).split("\n")
    preamble, found = sections.split_sections(lines, 2)
    assert [s.title for s in found] == ["Pending", "Resolved"]
    assert measured == ["# DECISIONS", "## Pending", "## Resolved"]


def test_a_lesson_unchanged_between_two_parses_is_read_once(fields_read: BodiesRead) -> None:
    """A close reads LESSONS as HEAD holds it and as it leaves it, and checks every lesson of both (3,000 at
    100x): a lesson the second text holds unchanged, at the same lines, is the first parse's lesson, with its
    fields and events read once; a lesson that changed, or moved, is read again."""
    from gitmem.checks.lessons_checks import lesson_rules
    from gitmem.memory import lessons

    first_text = lessons_of(30).decode().replace("· Lesson", "· Lesson read once")     # no other test's lessons
    first = lessons.parse(first_text)
    for lesson in first.lessons:
        lesson_rules("LESSONS.md", lesson)
    assert fields_read.bodies() == 30
    fields_read.clear()
    promoted = first_text.replace("- Status: open", "- Status: promoted R-01", 2).replace(
        "- Status: promoted R-01", "- Status: open", 1)          # the second lesson's status, on its own line
    second = lessons.parse(promoted)
    for lesson in second.lessons:
        lesson_rules("LESSONS.md", lesson)
    changed = [lesson.id for lesson in second.lessons if lesson not in first.lessons]
    assert changed == ["L-0002"] and fields_read.bodies() == 1
    assert all(new is old for new, old in zip(second.lessons, first.lessons, strict=True) if new.id != "L-0002")
    fields_read.clear()
    moved = promoted.replace("- Happened: 2026-11-10 (cycle 1) — it broke",
                             "- Happened: 2026-11-10 (cycle 1) — it broke\n  and more", 1)
    for lesson in lessons.parse(moved).lessons:
        assert lesson.happened is not None
    assert fields_read.bodies() == 30       # every lesson moved one line down: read again, with its new lines
