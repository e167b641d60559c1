"""The cycle runner end to end on real repositories: preflight, postflight, permissions, commit, salvage."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from gitmem import codes
from gitmem.agents.base import AgentError
from gitmem.checks.check_and_verify import verify_range
from gitmem.cycle.runner import CycleRefused, Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.workspace.cyclelock import lock_path
from tests.support.cycle_support import (
    WritingBackend,
    agent_signature_ok,
    built,
    file_at,
    head_commit,
    is_clean,
    write,
)
from tests.support.helpers import GitRepo


def run(repo: GitRepo, backend, **settings):
    return run_cycle(repo.ws(), backend, settings=Settings(**settings))


def test_a_cycle_commits_one_entry_and_one_block_as_the_agent(memrepo: GitRepo) -> None:
    start = memrepo.head()
    report = run(memrepo, WritingBackend(built("write hello.txt")))

    assert report.exit_code == ExitCode.OK
    assert (report.cycle, report.outcome, report.task) == (1, "built", "write hello.txt")
    commit = head_commit(memrepo)
    assert commit.message == ("gitmem: cycle 1 · built · write hello.txt\n\n"
                              f"Gitmem-Cycle: 1\nGitmem-Phase: cycle\nGitmem-Rules: {codes.RULES_VERSION}\n")
    assert agent_signature_ok(commit)
    assert str(commit.id) == report.commit
    assert file_at(memrepo.repo, "HEAD", "hello.txt") == "hello from cycle 1\n"
    entries = log.parse(memrepo.read("LOG.md")).entries
    assert [(e.cycle, e.outcome) for e in entries] == [(1, "built")]
    evidence = entries[0].get("Evidence") or ""
    assert "cat hello.txt" in evidence
    assert "tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400" in evidence
    assert now.parse(memrepo.read("NOW.md")).top.cycle == 1
    assert is_clean(memrepo)
    result = verify_range(memrepo.ws(), start, "HEAD")
    assert (result.commits, result.violations) == (1, [])


def test_the_next_cycle_is_numbered_after_the_last(memrepo: GitRepo) -> None:
    run(memrepo, WritingBackend(built("first")))
    report = run(memrepo, WritingBackend(built("second", {"b.txt": "b\n"})))
    assert report.cycle == 2
    assert head_commit(memrepo).message.startswith("gitmem: cycle 2 · built · second\n")
    assert [e.cycle for e in log.parse(memrepo.read("LOG.md")).entries] == [1, 2]


def test_a_dirty_tree_is_refused_with_every_file_listed(memrepo: GitRepo) -> None:
    memrepo.write("notes.txt", "mine\n")
    memrepo.append("ROADMAP.md", "- [ ] human edit in progress\n")
    memrepo.write("staged.txt", "staged\n")
    memrepo.stage("staged.txt")
    backend = WritingBackend(built())
    with pytest.raises(CycleRefused) as refused:
        run(memrepo, backend)
    message = str(refused.value)
    assert refused.value.exit_code == ExitCode.DIRTY == 3
    for line in ("untracked: notes.txt", "modified: ROADMAP.md", "staged: staged.txt", "git stash push"):
        assert line in message
    assert backend.requests == []
    assert not lock_path(memrepo.path / ".git" / "gitmem").exists()


def test_a_lock_held_by_a_live_process_refuses(memrepo: GitRepo) -> None:
    path = lock_path(memrepo.path / ".git" / "gitmem")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": "earlier"}))
    with pytest.raises(CycleRefused, match=f"pid {os.getpid()} .* is running"):
        run(memrepo, WritingBackend(built()))
    assert path.exists()


def test_a_stale_lock_is_cleared_with_a_message(memrepo: GitRepo) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = lock_path(memrepo.path / ".git" / "gitmem")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "started": "2026-01-01"}))
    report = run(memrepo, WritingBackend(built()))
    assert report.exit_code == ExitCode.OK
    assert f"cleared a stale lock left by cycle pid {dead.pid}" in report.messages[0]
    assert not path.exists()


def test_invalid_memory_is_refused(memrepo: GitRepo) -> None:
    memrepo.commit_files({"NOW.md": memrepo.read("NOW.md") + "\n## yesterday-ish · cycle 1\n- Did: x\n"})
    with pytest.raises(CycleRefused, match=r"NOW.md:\d+: GM102"):
        run(memrepo, WritingBackend(built()))


def test_unborn_and_detached_heads_get_clear_messages(tmp_path, git_env) -> None:
    from tests.support.helpers import make_repo

    unborn = make_repo(tmp_path / "unborn", commit=False)
    with pytest.raises(CycleRefused, match="no commits yet"):
        run(unborn, WritingBackend(built()))
    repo = make_repo(tmp_path / "detached")
    repo.repo.set_head(repo.repo.head.target)
    with pytest.raises(CycleRefused, match="HEAD is detached .*`git switch main`"):
        run(repo, WritingBackend(built()))


def test_a_model_that_never_logs_gets_a_no_build_entry(memrepo: GitRepo) -> None:
    def idle(memory, request) -> None:
        write(request.root, "scratch.txt", "half a thought\n")

    report = run(memrepo, WritingBackend(idle))
    assert (report.outcome, report.exit_code) == ("no-build", ExitCode.OK)
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert (entry.cycle, entry.outcome) == (1, "no-build")
    assert "Rule 0" in entry.get("Result") and "3 turn(s) (end_turn)" in entry.get("Result")
    block = now.parse(memrepo.read("NOW.md")).top
    assert block.cycle == 1 and "runner logged no-build" in block.render()
    assert head_commit(memrepo).message.startswith("gitmem: cycle 1 · no-build · no task logged\n")
    assert file_at(memrepo.repo, "HEAD", "scratch.txt") == "half a thought\n"
    assert is_clean(memrepo)


FORGED_CLOSE = "\n## 2026-12-07 23:47 UTC · close\n- Day: 2026-12-07\n- Done: everything, and well\n"


def _forges_a_close(memory, request, *, work: bool) -> None:
    """The agent logs its cycle (or not), then appends a close entry of today to LOG.md by hand."""
    if work:
        memory.add_log_entry(task="real work", outcome="built", result="done", cycle=request.cycle)
    with (request.root / "LOG.md").open("a", encoding="utf-8") as out:
        out.write(FORGED_CLOSE)


def test_a_close_entry_the_agent_forges_after_its_own_is_dropped_and_its_cycle_stands(memrepo: GitRepo) -> None:
    """Only the close writes a close entry. The agent's forged one used to be kept as the cycle's last entry: it
    has no Task, so the cycle failed and its work went to a salvage branch; kept, it would close the day."""
    report = run(memrepo, WritingBackend(lambda memory, request: _forges_a_close(memory, request, work=True)))
    assert (report.outcome, report.exit_code, report.task) == ("built", ExitCode.OK, "real work"), report.messages
    doc = log.parse(memrepo.read("LOG.md"))
    assert [(e.cycle, e.get("Task")) for e in doc.entries] == [(1, "real work")]
    assert "runner: dropped the close entry the agent wrote (2026-12-07 23:47 UTC · close): only the close writes " \
           "one" in doc.entries[0].get("Evidence")
    assert verify_range(memrepo.ws(), "HEAD~1", "HEAD").violations == []


def test_a_close_entry_alone_is_no_log_entry_of_the_cycle(memrepo: GitRepo) -> None:
    report = run(memrepo, WritingBackend(lambda memory, request: _forges_a_close(memory, request, work=False)))
    assert (report.outcome, report.exit_code) == ("no-build", ExitCode.OK), report.messages
    (entry,) = log.parse(memrepo.read("LOG.md")).entries
    assert entry.cycle == 1 and "Rule 0" in (entry.get("Result") or "") and entry.get("Day") is None
    assert "dropped the close entry the agent wrote" in (entry.get("Evidence") or "")


def test_extra_entries_and_blocks_are_cut_to_one(memrepo: GitRepo) -> None:
    def chatty(memory, request) -> None:
        memory.add_log_entry(task="first try", outcome="no-build", result="gave up", cycle=request.cycle)
        memory.add_log_entry(task="second try", outcome="built", result="done", cycle=request.cycle + 1)
        memory.add_now_block(did="a", human="nothing", next="b", cycle=request.cycle)
        memory.add_now_block(did="c", human="nothing", next="d", cycle=request.cycle + 1)

    report = run(memrepo, WritingBackend(chatty))
    doc = log.parse(memrepo.read("LOG.md"))
    assert [(e.cycle, e.get("Task")) for e in doc.entries] == [(1, "second try")]
    assert "kept only the last of 2 LOG entries" in doc.entries[0].get("Evidence")
    blocks = now.parse(memrepo.read("NOW.md")).blocks
    assert [(b.cycle, b.fields[0].value) for b in blocks] == [(1, "c")]
    assert report.task == "second try"
    assert verify_range(memrepo.ws(), "HEAD~1", "HEAD").violations == []


def _seed_history(repo: GitRepo) -> None:
    """A pending decision, a human rule, a lesson and a LOG entry, committed earlier."""
    rules_text = repo.read("RULES.md").replace(
        "## Proven rules\n", "## Proven rules\n- R-01 · Ship small things (human)\n")
    repo.commit_files({
        "DECISIONS.md": repo.read("DECISIONS.md").replace(
            "## Pending\n", "## Pending\n\n### D-0001 · Which name?\n- Asked: 2026-11-29 09:00 UTC (cycle 1)\n"
                            "- Recommendation: gitmem\n"),
        "RULES.md": rules_text,
        "LESSONS.md": repo.read("LESSONS.md") + "\n## L-0001 · Dates drift\n- Happened: 2026-11-29 (cycle 1) — "
                                                "guessed the date\n- Why: no clock\n- Change: use the clock\n"
                                                "- Status: open\n",
        "LOG.md": repo.read("LOG.md") + "\n## 2026-11-29 09:00 UTC · cycle 1 · built\n- Task: start\n"
                                        "- Result: started\n",
    }, "history")


def test_forbidden_edits_are_reverted_and_recorded(memrepo: GitRepo) -> None:
    _seed_history(memrepo)
    before = {name: memrepo.read(name) for name in ("DECISIONS.md", "RULES.md", "LESSONS.md", "LOG.md")}

    def overreach(memory, request) -> None:
        root = request.root
        # Everything a command-line agent could do by editing files directly.
        doc = decisions.parse(before["DECISIONS.md"])
        resolved = decisions.move_to_resolved(doc, "D-0001", answer="gitmem", answered=memory.now(),
                                     name="gitmem-agent", email="agent@gitmem.invalid")
        write(root, "DECISIONS.md", decisions.render(resolved))
        write(root, "RULES.md", before["RULES.md"].replace("Ship small things", "Ship big things").replace(
            "Keep it short.", "Keep it short and sharp."))
        write(root, "LESSONS.md", lessons.render(lessons.LessonsDoc(lessons.parse(before["LESSONS.md"]).preamble, ())))
        write(root, "LOG.md", before["LOG.md"].replace("- Result: started", "- Result: started brilliantly"))
        memory.add_log_entry(task="tidy memory", outcome="built", result="tidied", evidence="looked")
        memory.add_now_block(did="tidied", human="nothing", next="more")

    report = run(memrepo, WritingBackend(overreach))
    assert report.exit_code == ExitCode.OK
    pending = decisions.parse(memrepo.read("DECISIONS.md"))
    assert [d.id for d in pending.pending] == ["D-0001"] and pending.resolved == ()
    assert rules.parse(memrepo.read("RULES.md")).proven[0].text == "Ship small things"
    assert "Keep it short and sharp." in memrepo.read("RULES.md")      # free text is the agent's to edit
    assert memrepo.read("LESSONS.md") == before["LESSONS.md"]
    assert memrepo.read("LOG.md").startswith(before["LOG.md"])
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    evidence = entry.get("Evidence")
    assert entry.get("Task") == "tidy memory" and evidence.startswith("looked")
    for words in ("runner: reverted edits to proven/retired rules R-01",
                  "runner: reverted the agent's resolution of D-0001",
                  "runner: restored lesson L-0001",
                  "runner: reverted a rewrite of LOG at line"):
        assert words in evidence
    assert verify_range(memrepo.ws(), "HEAD~1", "HEAD").violations == []
    assert is_clean(memrepo)


def test_a_line_added_to_heads_last_log_entry_is_reverted_as_check_refuses_it(memrepo: GitRepo) -> None:
    # Issue 20: `check` refuses a line appended to HEAD's last LOG entry (GM301 appended_to_entry); the cycle's
    # permissions accepted any text that extended the old LOG, so the commit carried the edit to history.
    _seed_history(memrepo)
    before = memrepo.read("LOG.md")

    def amend_last_entry(memory, request) -> None:
        write(request.root, "LOG.md", before + "- Learned: the first cycle was brilliant\n")
        memory.add_log_entry(task="next", outcome="built", result="done", evidence="looked")
        memory.add_now_block(did="next", human="nothing", next="more")

    report = run(memrepo, WritingBackend(amend_last_entry))
    assert report.exit_code == ExitCode.OK
    text = memrepo.read("LOG.md")
    assert text.startswith(before) and "brilliant" not in text
    entries = log.parse(text).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "start"), (2, "next")]
    line = before.count("\n") + 1
    assert (f"runner: reverted text added to an old LOG entry at line {line} (LOG is append-only); kept 1 new "
            f"entry") in entries[-1].get("Evidence")
    assert verify_range(memrepo.ws(), "HEAD~1", "HEAD").violations == []
    assert is_clean(memrepo)


def test_an_agent_crash_is_salvaged_to_a_branch(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-api03-" + "x" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    start = memrepo.head()

    def crash(memory, request) -> None:
        write(request.root, "draft.py", "print('half done')\n")
        memory.ask_decision(title="Ship it?", recommendation="yes")
        memory.add_log_entry(task="draft", outcome="built", result="partial")
        raise AgentError(f"API failed with key {secret}: 500 Internal Server Error")

    report = run(memrepo, WritingBackend(crash))
    assert report.exit_code == ExitCode.SALVAGED == 4
    assert report.salvage_branch == "gitmem/salvage/cycle-1"
    assert secret not in json.dumps(report.as_dict())
    assert "API failed with key ***: 500" in report.error
    salvage = f"refs/heads/{report.salvage_branch}"
    assert file_at(memrepo.repo, salvage, "draft.py") == "print('half done')\n"
    assert "Ship it?" in file_at(memrepo.repo, salvage, "DECISIONS.md")
    assert str(memrepo.repo.revparse_single(salvage).parents[0].id) == start
    # main: a no-build entry naming the error and the branch, the tree clean, no draft.
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert (entry.cycle, entry.outcome) == (1, "no-build")
    assert "gitmem/salvage/cycle-1" in entry.get("Result") and "500 Internal Server Error" in entry.get("Result")
    assert secret not in memrepo.read("LOG.md")
    assert not (memrepo.path / "draft.py").exists()
    assert is_clean(memrepo)
    assert head_commit(memrepo).message.startswith("gitmem: cycle 1 · no-build · cycle run failed\n")
    assert verify_range(memrepo.ws(), start, "HEAD").violations == []


def test_a_hung_backend_times_out_and_is_salvaged(memrepo: GitRepo) -> None:
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace(
        "  max_context_tokens: 60000\n", "  max_context_tokens: 60000\n  timeout: 1\n")})

    def hang(memory, request) -> None:
        write(request.root, "started.txt", "yes\n")
        time.sleep(10)          # far past the 1 s timeout: the runner must not wait for it

    began = time.monotonic()
    report = run(memrepo, WritingBackend(hang), grace=0.2)
    assert time.monotonic() - began < 8
    assert report.exit_code == ExitCode.SALVAGED
    assert "timed out after 1s" in report.error
    assert file_at(memrepo.repo, "refs/heads/gitmem/salvage/cycle-1", "started.txt") == "yes\n"
    assert is_clean(memrepo)


def test_invalid_memory_after_the_agent_is_salvaged(memrepo: GitRepo) -> None:
    def scribble(memory, request) -> None:
        memory.add_log_entry(task="x", outcome="built", result="y")
        memory.add_now_block(did="x", human="nothing", next="y")
        with open(request.root / "DECISIONS.md", "a", encoding="utf-8") as handle:
            handle.write("<<<<<<< HEAD\n")

    report = run(memrepo, WritingBackend(scribble))
    assert report.exit_code == ExitCode.SALVAGED
    assert "GM901" in report.error
    assert "<<<<<<<" in file_at(memrepo.repo, "refs/heads/gitmem/salvage/cycle-1", "DECISIONS.md")
    assert "<<<<<<<" not in memrepo.read("DECISIONS.md")
    assert is_clean(memrepo)


def test_commits_made_during_the_cycle_are_kept_on_a_branch_and_their_files_judged(memrepo: GitRepo) -> None:
    start = memrepo.head()
    made: list[str] = []

    def committer(memory, request) -> None:
        built("own commit")(memory, request)
        memrepo.stage("hello.txt")
        made.append(str(memrepo.commit("agent's own commit")))

    report = run(memrepo, WritingBackend(committer))
    assert report.exit_code == ExitCode.OK
    commit = head_commit(memrepo)
    assert str(commit.parents[0].id) == start
    assert file_at(memrepo.repo, "HEAD", "hello.txt") == "hello from cycle 1\n"
    assert str(memrepo.repo.revparse_single("gitmem/local/cycle-1").id) == made[0]     # kept, never deleted
    assert [v.code for v in report.violations] == ["GM713"]
    assert any("kept on branch gitmem/local/cycle-1" in m for m in report.messages)


def test_a_secret_value_never_reaches_a_commit(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-api03-" + "y" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)

    def leak(memory, request) -> None:
        write(request.root, "config.txt", f"key = {secret}\n")
        built("write config")(memory, request)

    report = run(memrepo, WritingBackend(leak))
    assert report.exit_code == ExitCode.OK
    assert file_at(memrepo.repo, "HEAD", "config.txt") == "key = ***\n"
    assert "runner: removed a secret value from config.txt" in log.parse(memrepo.read("LOG.md")).entries[-1].get(
        "Evidence")


def test_an_agent_that_switches_branch_is_salvaged_back_on_main(memrepo: GitRepo) -> None:
    start = memrepo.head()

    def wander(memory, request) -> None:
        write(request.root, "side.txt", "work on the wrong branch\n")
        memrepo.repo.branches.local.create("elsewhere", memrepo.repo.head.peel())
        memrepo.repo.set_head("refs/heads/elsewhere")

    report = run(memrepo, WritingBackend(wander))
    assert report.exit_code == ExitCode.SALVAGED
    assert "the agent switched from main to elsewhere" in report.error
    assert memrepo.repo.head.shorthand == "main"
    assert str(memrepo.repo.revparse_single("elsewhere").id) == start
    assert file_at(memrepo.repo, "refs/heads/gitmem/salvage/cycle-1", "side.txt") == "work on the wrong branch\n"
    assert is_clean(memrepo)


def test_a_half_written_lock_is_stale_and_another_hosts_lock_is_respected(memrepo: GitRepo) -> None:
    path = lock_path(memrepo.path / ".git" / "gitmem")
    path.parent.mkdir(parents=True)
    path.write_text("")                      # killed between creating the lock and writing it
    assert run(memrepo, WritingBackend(built())).exit_code == ExitCode.OK
    path.write_text(json.dumps({"pid": 1, "host": "build-box-7", "started": "2026-11-30 08:00:00 UTC"}))
    with pytest.raises(CycleRefused, match="if no cycle is running on build-box-7, delete that file"):
        run(memrepo, WritingBackend(built("again", {"b.txt": "b\n"})))
    assert path.exists()


def test_a_hand_written_entry_keeps_its_prose_and_gains_evidence(memrepo: GitRepo) -> None:
    start = memrepo.head()

    def by_hand(memory, request) -> None:
        entry = (f"\n## {memory.now()} · cycle {request.cycle} · built\n- Task: hand-written\n"
                 "A paragraph the agent wrote outside the fields.\n- Result: done\n- Learned: little\n")
        (request.root / "LOG.md").write_text(memrepo.read("LOG.md") + entry, encoding="utf-8")
        memory.add_now_block(did="x", human="nothing", next="y")

    assert run(memrepo, WritingBackend(by_hand)).exit_code == ExitCode.OK
    lines = log.parse(memrepo.read("LOG.md")).entries[-1].render().splitlines()
    context = re.fullmatch(r"- Evidence: runner: context \d+ tokens of 60000 \(estimate\)", lines[3])
    assert context and lines[1:3] + lines[4:] == [
        "- Task: hand-written", "A paragraph the agent wrote outside the fields.",
        "  tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400",
        "- Result: done", "- Learned: little", f"- Started: {start[:12]}"]


def test_a_detached_head_is_told_to_switch_to_the_branch_it_is_on_not_a_main_that_is_not_there(
        tmp_path, git_env) -> None:
    from tests.support.helpers import make_repo

    repo = make_repo(tmp_path / "detached")
    head = str(repo.repo.head.target)
    repo.repo.branches.local.create("trunk", repo.repo[head])
    repo.repo.set_head("refs/heads/trunk")
    repo.repo.branches.local.delete("main")
    repo.repo.set_head(repo.repo.head.target)
    with pytest.raises(CycleRefused, match="HEAD is detached .*`git switch trunk`"):
        run(repo, WritingBackend(built()))
