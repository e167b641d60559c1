"""Claude Code's session hooks as processes, fed the JSON Claude Code sends: the session-start context (bounded
at any history and RULES size), Rule 0 at Stop (blocks once, never loops), silence inside a runner cycle."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.checks import CheckInput, run_checks
from gitmem.gitio import worktree_snapshot
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.sessions.context import LIMIT, session_context
from tests.support.helpers import AGENT, GitRepo, make_repo
from tests.support.sessions import capped_rules, crowded_memory, hook, lessons_for

LOG_ADD = {"task": "t", "outcome": "built", "result": "r"}


def commit_all(repo: GitRepo, message: str, author: tuple[str, str] | None = None) -> None:
    paths = [path for path, flags in repo.repo.status().items()]
    repo.stage(*paths)
    repo.commit(message, **({"author": author} if author else {}))


def test_session_start_prints_the_compact_memory_as_hook_json(memrepo: GitRepo) -> None:
    memory = MemoryWriter(memrepo.ws(), author_email=AGENT[1])
    memory.add_log_entry(task="ship hello.py", outcome="built", result="hello.py prints hi", cycle=1)
    memory.add_now_block(did="shipped hello.py", human="nothing", next="write its tests", cycle=1)
    memory.ask_decision(title="Publish to PyPI?", recommendation="yes, as gitmem-hello", cycle=1)
    commit_all(memrepo, "cycle 1", AGENT)

    run = hook("session-start", memrepo.path, source="startup")

    assert run.code == 0 and run.output is not None
    assert run.output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = run.context
    assert "this session is cycle 2 (interactive)" in context
    assert "one LOG entry and one NOW block" in context and "only the human answers" in context
    assert "## Top NOW block (NOW.md)" in context and "- Did: shipped hello.py" in context
    assert "- D-0001 · Publish to PyPI? (0h old) — recommends: yes, as gitmem-hello" in context
    assert "## Newly resolved: act on these, do not redo them\n(none)" in context
    assert "- cycle 1 · built · " in context and "ship hello.py → hello.py prints hi" in context
    assert "ROADMAP now: First week (current)" in context
    assert (memrepo.path / ".git" / "gitmem" / "sessions" / "s-1.json").is_file()


def test_after_a_compaction_the_context_comes_back_and_the_start_record_stays(memrepo: GitRepo) -> None:
    hook("session-start", memrepo.path, source="startup")
    record = memrepo.path / ".git" / "gitmem" / "sessions" / "s-1.json"
    started = record.read_text()
    memrepo.write("work.txt", "changed before the compaction\n")

    again = hook("session-start", memrepo.path, source="compact")

    assert "## Proven rules (RULES.md)" in again.context
    assert record.read_text() == started, "the session's start is what the stop hook compares with"
    stopped = hook("stop", memrepo.path, stop_hook_active=False).output
    assert stopped is not None
    assert stopped["decision"] == "block" and "work.txt" in stopped["reason"], "judged from the first start"


def test_the_answer_a_session_has_not_seen_is_newly_resolved_exactly_until_a_cycle_uses_it(memrepo: GitRepo) -> None:
    memory = MemoryWriter(memrepo.ws(), author_email=AGENT[1])
    memory.ask_decision(title="Which licence?", recommendation="MIT", cycle=1)
    memory.add_log_entry(task="ask", outcome="built", result="asked", cycle=1, extra={log.STARTED: memrepo.head()[:12]})
    commit_all(memrepo, "cycle 1", AGENT)
    MemoryWriter(memrepo.ws()).answer_decision("D-0001", answer="MIT it is", name="Ada Human",
                                                email="ada@example.com")
    commit_all(memrepo, "answer D-0001")

    shown = hook("session-start", memrepo.path).context
    assert "- D-0001 · Which licence? — answer: MIT it is" in shown.split("## Newly resolved")[1]

    MemoryWriter(memrepo.ws()).add_log_entry(**LOG_ADD, interactive=True)      # the session logs and commits
    commit_all(memrepo, "session")
    later = hook("session-start", memrepo.path, session="s-2").context
    assert "D-0001" not in later.split("## Newly resolved")[1]


def test_stop_blocks_once_a_session_that_changed_files_without_logging(memrepo: GitRepo) -> None:
    hook("session-start", memrepo.path)
    assert hook("stop", memrepo.path, stop_hook_active=False).output is None, "nothing changed yet"
    memrepo.write("src/app.py", "print('hi')\n")

    blocked = hook("stop", memrepo.path, stop_hook_active=False)

    assert blocked.code == 0 and blocked.output is not None
    assert blocked.output["decision"] == "block"
    reason = blocked.output["reason"]
    assert "changed files (src/app.py) but wrote no LOG entry" in reason
    assert "log it as cycle 1" in reason and "log_entry" in reason and "gitmem log add" in reason
    assert hook("stop", memrepo.path, stop_hook_active=True).output is None, "Claude Code is already continuing"
    assert hook("stop", memrepo.path, stop_hook_active=False).output is None, "at most once per session"


def test_stop_lets_a_session_finish_once_it_logged(memrepo: GitRepo) -> None:
    hook("session-start", memrepo.path)
    memrepo.write("src/app.py", "print('hi')\n")
    MemoryWriter(memrepo.ws()).add_log_entry(**LOG_ADD, interactive=True)
    assert hook("stop", memrepo.path, stop_hook_active=False).output is None


def test_stop_counts_commits_and_edits_to_files_already_dirty_at_the_start(memrepo: GitRepo) -> None:
    memrepo.write("draft.md", "one\n")
    hook("session-start", memrepo.path)
    assert hook("stop", memrepo.path).output is None
    memrepo.write("draft.md", "two\n")
    assert "draft.md" in hook("stop", memrepo.path).output["reason"]          # type: ignore[index]

    hook("session-start", memrepo.path, session="s-2")
    memrepo.commit_files({"draft.md": "two\n"}, "commit the draft")
    reason = hook("stop", memrepo.path, session="s-2").output["reason"]       # type: ignore[index]
    assert "draft.md" in reason and "commits since" in reason


def test_stop_without_a_recorded_start_records_now_and_judges_from_there(memrepo: GitRepo) -> None:
    memrepo.write("early.txt", "before the hooks were set up\n")
    assert hook("stop", memrepo.path, session="late").output is None
    memrepo.write("later.txt", "after\n")
    stopped = hook("stop", memrepo.path, session="late").output
    assert stopped is not None
    assert stopped["decision"] == "block"
    assert "later.txt" in stopped["reason"] and "early.txt" not in stopped["reason"], "judged from the record"


def test_inside_a_runner_cycle_the_hooks_are_silent(memrepo: GitRepo) -> None:
    cycle = {"GITMEM_CYCLE": "4"}
    start = hook("session-start", memrepo.path, env=cycle)
    memrepo.write("src/app.py", "print('hi')\n")
    stop = hook("stop", memrepo.path, env=cycle)
    assert (start.code, start.out, stop.code, stop.out) == (0, "", 0, "")
    assert "runner cycle" in start.err and "runner" in stop.err


def test_outside_a_memory_repository_and_on_bad_input_the_hooks_exit_0_quietly(tmp_path: Path,
                                                                                memrepo: GitRepo) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for event in ("session-start", "stop"):
        run = hook(event, plain)
        assert (run.code, run.out) == (0, "")
    bad = hook("stop", memrepo.path, raw="{not json")
    assert (bad.code, bad.out) == (0, "") and "not the hook's JSON" in bad.err
    assert hook("session-start", memrepo.path, raw="").output is not None, "cwd is enough to find the repo"


def run_hook_bytes(event: str, cwd: Path, payload: bytes, encoding: str) -> tuple[int, str, str]:
    """`gitmem hook EVENT` fed `payload` as bytes, with Python's stdin text layer set as a locale sets it."""
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run([str(Path(sys.executable).parent / "gitmem"), "hook", event], input=payload, cwd=cwd,
                          env={**environment, "PYTHONIOENCODING": encoding}, capture_output=True, timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode(errors="replace")


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_stdin_that_is_not_utf_8_is_no_traceback_under_a_strict_utf_8_locale(memrepo: GitRepo, event: str) -> None:
    """A UTF-8 locale such as en_US.UTF-8 decodes stdin strictly: a byte that is not UTF-8 was a traceback
    (exit 70), where a hook exits 0 whatever its input."""
    payload = b'{"session_id": "s-\xff\xfe", "cwd": "' + bytes(memrepo.path) + b'"}'
    code, out, err = run_hook_bytes(event, memrepo.path, payload, "utf-8:strict")
    assert code == 0 and "Traceback" not in err, err
    assert "gitmem: hook: stdin is not the hook's JSON (not UTF-8: invalid start byte at byte 18)" in err, err
    if event == "session-start":        # without the payload, the working directory still finds the memory
        assert "## Proven rules (RULES.md)" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    else:                               # no session id: nothing to enforce
        assert out == ""


def test_the_payload_is_read_as_utf_8_whatever_the_locale(memrepo: GitRepo, tmp_path: Path) -> None:
    """JSON is UTF-8 (RFC 8259): under a Latin-1 locale the session's cwd `…/café` was read as `…/cafÃ©`, no
    directory, and the session started without its memory."""
    cafe = memrepo.path / "café"
    cafe.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = json.dumps({"session_id": "s-1", "cwd": str(cafe)}, ensure_ascii=False).encode()
    code, out, err = run_hook_bytes("session-start", elsewhere, payload, "latin-1")
    assert code == 0 and out, err
    assert "## Proven rules (RULES.md)" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_a_hook_started_with_stdin_closed_exits_0(memrepo: GitRepo, event: str) -> None:
    """A host may start the hook with no stdin at all (fd 0 closed): Python's sys.stdin is then None, and
    asking it isatty() was a traceback (exit 70)."""
    import os
    import subprocess
    import sys

    gitmem = Path(sys.executable).parent / "gitmem"
    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run(["sh", "-c", f'exec "{gitmem}" hook {event} <&-'], cwd=memrepo.path, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    if event == "session-start":        # no payload: the working directory finds the memory
        assert "## Proven rules (RULES.md)" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_broken_config_does_not_break_the_session(memrepo: GitRepo) -> None:
    memrepo.write("gitmem.yaml", "limits: [not, a, mapping]\n")
    for event in ("session-start", "stop"):
        run = hook(event, memrepo.path)
        assert (run.code, run.out) == (0, "") and "gitmem.yaml" in run.err


def test_the_context_stays_under_the_limit_with_memory_far_past_its_caps(memrepo: GitRepo) -> None:
    memrepo.commit_files({"RULES.md": capped_rules(), "LESSONS.md": lessons_for(), **crowded_memory()},
                         "memory at its caps")
    config = memrepo.ws().config
    judged = run_checks(CheckInput(config, None, worktree_snapshot(memrepo.path, config.memory_paths().values())))
    assert [v for v in judged if v.is_error] == [], "valid memory, judged as if new"

    context = hook("session-start", memrepo.path).context

    assert len(context) < LIMIT
    assert "- R-01 · rule 1: always measure" in context and "more (see RULES.md)" in context
    assert "more (`gitmem pending`)" in context and "D-0001 · Should the agent" in context
    assert "more (see DECISIONS.md)" in context
    assert all(f"- cycle {n} · built ·" in context for n in range(116, 121)), "every recent LOG entry, one line"
    assert max(len(line) for line in context.splitlines()) <= 700      # the protocol paragraph is the longest


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1, 10, 100], ids=lambda s: f"{s}x")
def test_the_context_stays_under_the_limit_at_every_history_size_with_rules_at_the_cap(
        scale: int, tmp_path: Path, git_env: None) -> None:
    from tests.support.synth import cached_repo
    from tests.support.synth_copy import working_copy

    root = working_copy(cached_repo(scale), tmp_path / "repo")
    (root / "RULES.md").write_text(capped_rules(), encoding="utf-8")
    run = hook("session-start", root)
    assert len(run.context) < LIMIT, len(run.context)
    assert "- R-30 ·" in run.context or "more (see RULES.md)" in run.context
    print(f"\nsession-start context at {scale}x, RULES at its cap: {len(run.context)} characters")


def test_the_library_context_and_the_hook_agree(memrepo: GitRepo) -> None:
    assert hook("session-start", memrepo.path).context == session_context(memrepo.ws())



def test_a_runner_cycle_pulled_in_during_the_session_is_not_the_sessions_entry(memrepo: GitRepo) -> None:
    hook("session-start", memrepo.path)
    memrepo.write("src/app.py", "print('hi')\n")
    MemoryWriter(memrepo.ws(), author_email=AGENT[1]).add_log_entry(**LOG_ADD, cycle=1)   # the runner's, pulled
    stopped = hook("stop", memrepo.path).output
    assert stopped is not None
    assert stopped["decision"] == "block" and "src/app.py" in stopped["reason"]


def test_a_session_that_logged_and_then_pulled_many_runner_cycles_is_not_told_to_log_again(memrepo: GitRepo) -> None:
    hook("session-start", memrepo.path)
    memrepo.write("src/app.py", "print('hi')\n")
    MemoryWriter(memrepo.ws()).add_log_entry(**LOG_ADD, interactive=True)        # the session's own entry
    commit_all(memrepo, "session")
    runner = MemoryWriter(memrepo.ws(), author_email=AGENT[1])
    for cycle in range(2, 26):          # a day of hourly scheduled cycles, merged in after it (`git pull`)
        runner.add_log_entry(**LOG_ADD, cycle=cycle)
    commit_all(memrepo, "merge the scheduled cycles", AGENT)

    stopped = hook("stop", memrepo.path)

    assert stopped.code == 0 and stopped.output is None, "the session wrote its entry: a second one would be a lie"
    assert "wrote its LOG entry" in stopped.err


@pytest.mark.parametrize("argv", [["hook", "stop"], ["hook", "session-start"], ["check"]], ids=" ".join)
def test_the_hooks_and_the_check_stay_lean(memrepo: GitRepo, argv: list[str]) -> None:
    import subprocess
    import sys

    probe = ("import sys; from gitmem.cli import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in ('mcp', 'mcp_types', 'anthropic', 'tomlkit', 'pydantic', 'starlette') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=memrepo.path, input="{}", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("event", ["session-start", "stop"])
@pytest.mark.parametrize("cwd", [5, ["a"], {"path": "x"}])
def test_a_cwd_that_is_not_text_is_ignored_not_a_traceback(memrepo: GitRepo, event: str, cwd: object) -> None:
    names = {"session-start": "SessionStart", "stop": "Stop"}
    run = hook(event, memrepo.path, raw=json.dumps({"session_id": "s-1", "cwd": cwd, "hook_event_name": names[event]}))
    assert run.code == 0 and "Traceback" not in run.err
    if event == "session-start":
        assert "## Proven rules (RULES.md)" in run.context, "found from the working directory instead"


def test_a_dirty_link_to_a_fifo_is_not_opened(memrepo: GitRepo, tmp_path: Path) -> None:
    import os
    import threading

    from gitmem.sessions.record import work_tree_fingerprint

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (memrepo.path / "pipe-link").symlink_to(fifo)
    found: dict[str, str] = {}
    worker = threading.Thread(target=lambda: found.update(work_tree_fingerprint(memrepo.ws())), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():           # it opened the FIFO: let it go, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
    assert not worker.is_alive() and found["pipe-link"].startswith("link:")
    first = found["pipe-link"]
    (memrepo.path / "pipe-link").unlink()
    (memrepo.path / "pipe-link").symlink_to(tmp_path / "elsewhere")
    assert work_tree_fingerprint(memrepo.ws())["pipe-link"] != first, "a link retargeted is a change"


@pytest.mark.parametrize("damage", [{"last_cycle": "3"}, {"head": 7}, {"dirty": ["a"]}, {"dirty": {"a": 1}}])
def test_a_damaged_session_record_is_started_afresh_not_a_traceback(memrepo: GitRepo, damage: dict) -> None:
    hook("session-start", memrepo.path)
    record = memrepo.path / ".git" / "gitmem" / "sessions" / "s-1.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), **damage}))
    memrepo.write("work.txt", "changed\n")
    run = hook("stop", memrepo.path, stop_hook_active=False)
    assert run.code == 0 and "Traceback" not in run.err and run.output is None
    assert "recorded the work tree now" in run.err


def test_a_session_in_a_repository_nested_in_the_memory_repository_is_the_memory_repositorys(memrepo: GitRepo) -> None:
    """The launcher the hooks run is the outermost work tree's (gitmem.sessions.launcher.FIND), and so is the memory
    they serve: a session that `cd`s into a clone inside the tree (vendor/lib), or into a repository the agent made
    there with a gitmem.yaml and LOG of its own, is still judged by Rule 0 and shown the human's memory, not
    silenced, nor fed the agent's own "proven rules"."""
    MemoryWriter(memrepo.ws()).add_now_block(did="shipped the heron site", human="nothing", next="its tests", cycle=1)
    commit_all(memrepo, "cycle 1")
    hook("session-start", memrepo.path)
    memrepo.write("src/app.py", "print('hi')\n")
    nested = make_repo(memrepo.path / "vendor" / "lib", template=False, commit=False)
    (nested.path / "gitmem.yaml").write_text("version: 1\n")
    (nested.path / "LOG.md").write_text("# LOG\n")
    (nested.path / "RULES.md").write_text("# RULES\n\n## Proven rules\n- R-01 · push straight to production\n")

    context = hook("session-start", nested.path, source="compact").context
    assert "push straight to production" not in context and "- Did: shipped the heron site" in context
    stopped = hook("stop", nested.path, stop_hook_active=False).output
    assert stopped is not None and stopped["decision"] == "block" and "src/app.py" in stopped["reason"]


@pytest.mark.parametrize("planted", ["sessions", "."])
def test_a_linked_session_folder_is_never_written_nor_pruned_through(memrepo: GitRepo, tmp_path: Path,
                                                                     planted: str) -> None:
    """`.git/gitmem/sessions` (or `.git/gitmem` itself) replaced by a link to a folder of the human's: the session
    record is neither written there nor are the folder's older `*.json` files pruned as old records; the session
    still gets its memory (gitmem.workspace.statedir.state_directory refuses the link, as for the lock)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    for n in range(60):
        (victim / f"f{n}.json").write_text("{}")
    state = memrepo.path / ".git" / "gitmem"
    state.mkdir(exist_ok=True)
    link = state / planted if planted != "." else state
    if planted == ".":
        import shutil

        shutil.rmtree(state)
    link.symlink_to(victim, target_is_directory=True)

    run = hook("session-start", memrepo.path)

    assert sorted(p.name for p in victim.iterdir()) == sorted(f"f{n}.json" for n in range(60))
    assert "## Proven rules (RULES.md)" in run.context and "symbolic link" in run.err


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_a_fifo_or_a_link_planted_as_a_session_record_is_not_opened(memrepo: GitRepo, tmp_path: Path,
                                                                    event: str) -> None:
    """A session's record replaced by a FIFO (a resumed session's hook waited for a writer that never comes, until
    the host's timeout) or by a link to a file of the human's: the hook answers at once and reads neither."""
    import os

    sessions = memrepo.path / ".git" / "gitmem" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    os.mkfifo(sessions / "s-1.json")
    secret = tmp_path / "theirs.json"
    secret.write_text('{"session": "s-2", "head": null, "dirty": {}, "last_cycle": 0, "blocked": true}')
    (sessions / "s-2.json").symlink_to(secret)
    memrepo.write("src/app.py", "print('hi')\n")

    for session in ("s-1", "s-2"):
        run = hook(event, memrepo.path, session=session, timeout=30, stop_hook_active=False)
        assert run.code == 0 and "Traceback" not in run.err, run.err
    assert secret.read_text().endswith('"blocked": true}'), "never written through"


def test_a_dangling_link_among_the_session_records_costs_no_session_its_memory(memrepo: GitRepo) -> None:
    """Pruning old records looked at each `*.json` through links: one dangling link there (or a record removed
    meanwhile) lost every new session its context and its start record."""
    sessions = memrepo.path / ".git" / "gitmem" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "gone.json").symlink_to(memrepo.path / "no-such-file")

    run = hook("session-start", memrepo.path)

    assert "## Proven rules (RULES.md)" in run.context, run.err
    assert (sessions / "s-1.json").is_file()


def test_pruning_keeps_the_newest_records(memrepo: GitRepo) -> None:
    import os

    from gitmem.sessions import record

    ws = memrepo.ws()
    for n in range(6):
        record.save(ws, record.SessionRecord(f"r-{n}", None))
        made = record.folder(ws) / f"r-{n}.json"           # type: ignore[operator]
        os.utime(made, (1_000_000 + n, 1_000_000 + n))
    record.prune(ws, keep=4)
    assert sorted(p.name for p in record.folder(ws).iterdir()) == [f"r-{n}.json" for n in range(2, 6)]  # type: ignore[union-attr]


def test_a_linked_work_tree_kept_inside_the_checkout_serves_its_own_memory(memrepo: GitRepo) -> None:
    """A `git worktree add .worktrees/feature` of the same repository is the user's own checkout of it, not a
    repository planted inside: its session is judged by, and writes, the memory of that work tree."""
    import subprocess

    memrepo.write(".gitignore", ".worktrees/\n")
    commit_all(memrepo, "ignore the work trees")
    subprocess.run(["git", "worktree", "add", "-q", "-b", "feature", ".worktrees/feature"], cwd=memrepo.path,
                   check=True, capture_output=True)
    feature = memrepo.path / ".worktrees" / "feature"

    hook("session-start", feature)
    (feature / "app.py").write_text("print('hi')\n")
    stopped = hook("stop", feature, stop_hook_active=False).output
    assert stopped is not None and "app.py" in stopped["reason"]
    assert (feature / ".git").is_file() and not (memrepo.path / "app.py").exists()


def test_a_huge_untracked_file_costs_the_hooks_neither_their_memory_nor_the_sessions_context(memrepo: GitRepo) -> None:
    """The hooks fingerprint the dirty files after every turn: a 1.5 GB file left untracked (a dataset, a dump) was
    read whole, which under a 1 GB address-space limit was a MemoryError traceback (exit 70) and no memory for the
    session. A big file is told by its stat data; its change is still seen."""
    import os
    import resource
    import subprocess

    from tests.support.sessions import GITMEM

    big = memrepo.path / "data.bin"
    with big.open("wb") as handle:          # sparse: no disk spent
        handle.truncate(1536 << 20)

    def run(event: str) -> subprocess.CompletedProcess[str]:
        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        payload = json.dumps({"session_id": "big", "cwd": str(memrepo.path), "stop_hook_active": False})
        environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
        return subprocess.run([str(GITMEM), "hook", event], input=payload, cwd=memrepo.path, env=environment,
                              capture_output=True, text=True, timeout=120, preexec_fn=limited)

    started = run("session-start")
    assert started.returncode == 0 and "Traceback" not in started.stderr, started.stderr[-2000:]
    assert "## Proven rules (RULES.md)" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    unchanged = run("stop")
    assert unchanged.returncode == 0 and unchanged.stdout == "", unchanged.stderr[-2000:]
    with big.open("r+b") as handle:          # the session writes into it, keeping its size
        handle.seek(1 << 30)
        handle.write(b"changed")
    stopped = run("stop")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["decision"] == "block"
    assert "data.bin" in json.loads(stopped.stdout)["reason"]


def test_a_hook_started_in_a_removed_directory_still_serves_the_sessions_cwd(memrepo: GitRepo, tmp_path: Path) -> None:
    """The process's working directory is the last place looked, yet asking for it came first and raised: the
    session lost its memory although its payload named the repository."""
    import os
    import subprocess

    from tests.support.sessions import GITMEM

    gone = tmp_path / "removed"
    gone.mkdir()
    payload = json.dumps({"session_id": "s-1", "cwd": str(memrepo.path), "hook_event_name": "SessionStart"})
    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && exec "$2" hook session-start', "sh", str(gone),
                           str(GITMEM)], input=payload, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "## Proven rules (RULES.md)" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_session_started_on_an_uncommitted_entry_is_told_the_open_cycle_its_tools_write_to(memrepo: GitRepo) -> None:
    """An earlier session logged and nobody committed. The next session was told "this session is cycle 2 ... write
    exactly one LOG entry", while its log_entry is refused until that commit and its other memory goes to cycle 1,
    the open cycle (a session lasts until its entry is committed)."""
    MemoryWriter(memrepo.ws()).add_log_entry(**LOG_ADD, interactive=True)         # cycle 1, never committed

    context = hook("session-start", memrepo.path, session="s-2").context

    assert "this session continues cycle 1 (interactive)" in context and "LOG.md" in context
    assert "this session is cycle 2" not in context
    lesson = MemoryWriter(memrepo.ws()).add_lesson(title="t", happened="h", why="w", change="c")
    assert lesson.happened is not None and lesson.happened.cycle == 1, "the tools write to the cycle it names"
    commit_all(memrepo, "the earlier session's work")
    assert "this session is cycle 2 (interactive)" in hook("session-start", memrepo.path, session="s-3").context


@pytest.mark.parametrize("argv", [["session-start", "--host", "bad"], ["stop", "--no-such-flag"], ["pre-compact"]])
def test_a_hook_command_line_this_gitmem_does_not_know_is_a_note_and_exit_0(memrepo: GitRepo, argv: list[str]) -> None:
    """A CLI's settings may name a flag or a hook of another gitmem version. Claude Code takes a Stop hook's exit
    2 for "keep going" and shows the model its stderr: a usage error must end as every hook ends, exit 0."""
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run([str(Path(sys.executable).parent / "gitmem"), "hook", *argv], input=b"{}",
                          cwd=memrepo.path, env=environment, capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 0 and done.stdout == b""
    assert err.count("\n") == 1 and err.startswith("gitmem: hook: ") and "nothing done" in err
