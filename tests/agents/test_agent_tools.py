"""The cycle's tool layer in a real repository: confinement, refusals, memory writes, recall, run_command."""
from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.agents.tools import Toolbox, plain_recall, tool_schemas
from gitmem.checks.check_and_verify import check_worktree
from gitmem.config import Shell, load_config
from gitmem.memory import decisions, lessons, log, now
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo

CLOCK = lambda: datetime(2026, 11, 30, 9, 30, tzinfo=UTC)  # noqa: E731


@pytest.fixture
def box(memrepo: GitRepo) -> Toolbox:
    return Toolbox(Workspace.at(memrepo.path), cycle=1, clock=CLOCK)


def test_read_file_whole_and_by_range(box: Toolbox, memrepo: GitRepo) -> None:
    memrepo.write("src/a.txt", "one\ntwo\nthree\n")
    whole = box.call("read_file", {"path": "src/a.txt"})
    assert not whole.is_error
    assert whole.text.splitlines() == ["src/a.txt: lines 1-3 of 3", "     1\tone", "     2\ttwo", "     3\tthree"]
    part = box.call("read_file", {"path": "src/a.txt", "start_line": 2, "end_line": 2})
    assert part.text.splitlines()[1:] == ["     2\ttwo"]


def test_read_file_over_the_line_limit_must_be_searched_or_ranged(box: Toolbox, memrepo: GitRepo) -> None:
    memrepo.write("big.txt", "".join(f"line {n}\n" for n in range(1, 401)))
    outcome = box.call("read_file", {"path": "big.txt"})
    assert outcome.is_error
    assert "400 lines (over 300)" in outcome.text and "search_files" in outcome.text
    ranged = box.call("read_file", {"path": "big.txt", "start_line": 350, "end_line": 351})
    assert ranged.text.splitlines()[1:] == ["   350\tline 350", "   351\tline 351"]
    found = box.call("search_files", {"pattern": "line 39[89]$", "path": "big.txt"})
    assert found.text.splitlines() == ["big.txt:398: line 398", "big.txt:399: line 399"]


def test_list_and_search_skip_git(box: Toolbox, memrepo: GitRepo) -> None:
    memrepo.write("src/app.py", "print('needle')\n")
    listing = box.call("list_files", {}).text.splitlines()
    assert "src/app.py" in listing and "RULES.md" in listing
    assert not any(line.startswith(".git/") for line in listing)
    top = box.call("list_files", {"recursive": False}).text.splitlines()
    assert "src/" in top and "prompts/" in top and "RULES.md" in top and "src/app.py" not in top
    assert ".git/" not in top
    hits = box.call("search_files", {"pattern": "needle", "glob": "*.py"}).text
    assert hits == "src/app.py:1: print('needle')"
    assert box.call("search_files", {"pattern": "refs/heads"}).text == "no match for 'refs/heads'"


def test_write_and_edit_files(box: Toolbox, memrepo: GitRepo) -> None:
    assert box.call("write_file", {"path": "src/new.py", "content": "x = 1\ny = 2\n"}).text == \
        "wrote src/new.py (2 lines)"
    assert memrepo.read("src/new.py") == "x = 1\ny = 2\n"
    assert not box.call("edit_file", {"path": "src/new.py", "old_text": "y = 2", "new_text": "y = 3"}).is_error
    assert memrepo.read("src/new.py") == "x = 1\ny = 3\n"
    missing = box.call("edit_file", {"path": "src/new.py", "old_text": "zzz", "new_text": "q"})
    assert missing.is_error and "not found" in missing.text
    memrepo.write("twice.txt", "a a\n")
    twice = box.call("edit_file", {"path": "twice.txt", "old_text": "a", "new_text": "b"})
    assert twice.is_error and "2 times" in twice.text
    assert not box.call("edit_file",
                        {"path": "twice.txt", "old_text": "a", "new_text": "b", "replace_all": True}).is_error
    assert memrepo.read("twice.txt") == "b b\n"


@pytest.mark.parametrize("path", ["LOG.md", "RULES.md", "DECISIONS.md", "NOW.md", "LESSONS.md", "gitmem.yaml",
                                  "./LOG.md", "src/../LOG.md"])
def test_memory_files_cannot_be_written_with_file_tools(box: Toolbox, memrepo: GitRepo, path: str) -> None:
    before = {p: memrepo.read(p) for p in ("LOG.md", "RULES.md", "DECISIONS.md", "gitmem.yaml")}
    wrote = box.call("write_file", {"path": path, "content": "# LOG\n\nrewritten\n"})
    edited = box.call("edit_file", {"path": path, "old_text": "#", "new_text": "##", "replace_all": True})
    assert wrote.is_error and edited.is_error
    assert before == {p: memrepo.read(p) for p in before}
    assert len([n for n in box.notes if n.startswith(("refused write_file", "refused edit_file"))]) == 2


def test_the_roadmap_stays_editable(box: Toolbox, memrepo: GitRepo) -> None:
    done = box.call("edit_file", {"path": "ROADMAP.md", "old_text": "- [ ] Ship a first useful thing",
                                  "new_text": "- [x] Ship a first useful thing"})
    assert not done.is_error and "- [x] Ship a first useful thing" in memrepo.read("ROADMAP.md")


def test_a_symlink_to_a_memory_file_is_refused_too(box: Toolbox, memrepo: GitRepo) -> None:
    os.symlink("LOG.md", memrepo.path / "notes.md")
    outcome = box.call("write_file", {"path": "notes.md", "content": "gone\n"})
    assert outcome.is_error and "memory file" in outcome.text
    assert memrepo.read("LOG.md").startswith("# LOG")


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "~/x", "src/../../outside.txt", ".git/config",
                                  ".GIT/config", "link-out/secret.txt", "link-git/config", "link-file"])
def test_paths_cannot_escape_the_work_tree(box: Toolbox, memrepo: GitRepo, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(outside, memrepo.path / "link-out")
    os.symlink(memrepo.path / ".git", memrepo.path / "link-git")
    os.symlink(outside / "secret.txt", memrepo.path / "link-file")
    for tool, args in (("read_file", {}), ("write_file", {"content": "x"}), ("list_files", {}),
                       ("search_files", {"pattern": "secret"})):
        outcome = box.call(tool, {"path": path, **args})
        assert outcome.is_error, (tool, path, outcome.text)
        assert "secret" not in outcome.text.replace(path, "").replace("'secret'", "")
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert not (tmp_path / "outside.txt").exists()


def test_memory_tools_write_valid_memory(box: Toolbox, memrepo: GitRepo) -> None:
    asked = box.call("ask_decision", {"title": "Ship on Fridays?", "recommendation": "no: nobody watches"})
    assert asked.text == "DECISIONS.md: asked D-0001 · Ship on Fridays?"
    lesson = box.call("add_lesson", {"title": "Check the clock", "happened": "dates drifted",
                                     "why": "guessed the time", "change": "use the clock"})
    assert lesson.text == "LESSONS.md: added L-0001 · Check the clock"
    entry = box.call("log_entry", {"task": "hello", "outcome": "built", "result": "hello.py prints hi",
                                   "evidence": "python hello.py -> hi"})
    assert entry.text == "LOG.md: appended ## 2026-11-30 09:30 UTC · cycle 1 · built"
    block = box.call("now_block", {"did": "hello.py", "human": "nothing", "next": "tests"})
    assert block.text == "NOW.md: added ## 2026-11-30 09:30 UTC · cycle 1"
    assert log.parse(memrepo.read("LOG.md")).entries[-1].get("Evidence") == "python hello.py -> hi"
    assert now.parse(memrepo.read("NOW.md")).top.cycle == 1
    assert decisions.parse(memrepo.read("DECISIONS.md")).pending[0].asked_cycle == 1
    assert lessons.parse(memrepo.read("LESSONS.md")).find("L-0001").happened.cycle == 1
    assert [v for v in check_worktree(memrepo.ws()) if v.is_error] == []
    assert box.notes == []


def test_one_log_entry_and_one_now_block_per_cycle(box: Toolbox, memrepo: GitRepo) -> None:
    bad = box.call("log_entry", {"task": "x", "outcome": "shipped", "result": "y"})
    assert bad.is_error and "outcome must be one of" in bad.text
    assert not box.call("log_entry", {"task": "x", "outcome": "no-build", "result": "blocked on D-0001"}).is_error
    again = box.call("log_entry", {"task": "x", "outcome": "built", "result": "y"})
    assert again.is_error and "already wrote" in again.text
    assert len(log.parse(memrepo.read("LOG.md")).entries) == 1
    assert not box.call("now_block", {"did": "a", "human": "b", "next": "c"}).is_error
    assert box.call("now_block", {"did": "a", "human": "b", "next": "c"}).is_error


def test_confirm_lesson_and_unknown_ids(box: Toolbox, memrepo: GitRepo) -> None:
    box.call("add_lesson", {"title": "T", "happened": "h", "why": "w", "change": "c"})
    later = Toolbox(Workspace.at(memrepo.path), cycle=4, clock=CLOCK)
    assert later.call("confirm_lesson", {"id": "L-0001", "evidence": "it held"}).text == \
        "LESSONS.md: confirmed L-0001 (1 confirmations)"
    missing = later.call("confirm_lesson", {"id": "L-0099", "evidence": "x"})
    assert missing.is_error and "L-0099" in missing.text


def test_bad_calls_become_error_results(box: Toolbox) -> None:
    assert box.call("no_such_tool", {}).is_error
    assert box.call("read_file", {"nope": 1}).is_error
    assert box.call("read_file", "not an object").is_error   # type: ignore[arg-type]
    assert box.call("read_file", {"path": "missing.txt"}).is_error
    assert len(box.notes) == 4


def test_recall_finds_logged_facts(box: Toolbox, memrepo: GitRepo) -> None:
    box.call("log_entry", {"task": "tune the flux capacitor", "outcome": "built", "result": "88 mph reached"})
    text = plain_recall(memrepo.path, box.config, "Flux capacitor", 5)
    assert text.splitlines() == [f"LOG.md:{len(memrepo.read('LOG.md').splitlines()) - 1}: "
                                 "- Task: tune the flux capacitor"]
    assert plain_recall(memrepo.path, box.config, "unicorn", 5) == "no memory of that"
    # The shared recall engine (or the plain search before it lands) points at the entry.
    outcome = box.call("recall", {"query": "flux capacitor"})
    heading = log.parse(memrepo.read("LOG.md")).entries[-1].line
    assert not outcome.is_error and "capacitor" in outcome.text
    assert outcome.text.startswith((f"LOG.md:{heading}", f"LOG.md:{heading + 1}"))


def test_run_command_is_off_by_default_and_allowlisted(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(memrepo.path)
    off = Toolbox(Workspace.at(memrepo.path, config), cycle=1)
    assert "run_command" not in [t["name"] for t in off.schemas()]
    assert off.call("run_command", {"command": "echo hi"}).is_error
    shell = Shell(enabled=True, allow=(sys.executable,), timeout=2)
    on = Toolbox(Workspace.at(memrepo.path, replace(config, agent=replace(config.agent, shell=shell))), cycle=1)
    assert on.schemas()[-1]["name"] == "run_command"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak-000")
    code = "import os; print(42, os.environ.get('ANTHROPIC_API_KEY'))"
    done = on.call("run_command", {"command": f"{sys.executable} -c \"{code}\""})
    assert done.text == "exit 0\n42 None\n"
    refused = on.call("run_command", {"command": "rm -rf ."})
    assert refused.is_error and "agent.shell.allow" in refused.text
    slow = on.call("run_command", {"command": f"{sys.executable} -c \"import time; time.sleep(10)\""})
    assert slow.is_error and "timed out after 2 s" in slow.text


def test_schemas_are_fresh_copies_with_required_fields() -> None:
    first = tool_schemas()
    first[-1]["cache_control"] = {"type": "ephemeral"}
    assert "cache_control" not in tool_schemas()[-1]
    names = [t["name"] for t in first]
    assert names == ["read_file", "list_files", "search_files", "write_file", "edit_file", "log_entry",
                     "now_block", "ask_decision", "add_lesson", "confirm_lesson", "roadmap_done", "recall"]
    for tool in first:
        schema = tool["input_schema"]
        assert schema["type"] == "object" and set(schema["required"]) <= set(schema["properties"])


def test_a_link_inside_the_tree_is_never_followed(box: Toolbox, memrepo: GitRepo) -> None:
    """The tools open files as gitmem opens its own (gitmem.confined.files): a link is refused even when it
    points back inside the tree, where it used to be followed; plain files work as before."""
    memrepo.write("src/real.txt", "needle\n")
    os.symlink("real.txt", memrepo.path / "src" / "alias.txt")
    os.symlink("src", memrepo.path / "folder-alias")
    for tool, args in (("read_file", {"path": "src/alias.txt"}),
                       ("read_file", {"path": "folder-alias/real.txt"}),
                       ("write_file", {"path": "src/alias.txt", "content": "changed\n"}),
                       ("write_file", {"path": "folder-alias/new.txt", "content": "x\n"}),
                       ("edit_file", {"path": "src/alias.txt", "old_text": "needle", "new_text": "pin"}),
                       ("list_files", {"path": "folder-alias"}),
                       ("search_files", {"pattern": "needle", "path": "folder-alias"})):
        outcome = box.call(tool, args)
        assert outcome.is_error and "symbolic link" in outcome.text, (tool, args, outcome.text)
    assert memrepo.read("src/real.txt") == "needle\n" and os.path.islink(memrepo.path / "src" / "alias.txt")
    assert not (memrepo.path / "src" / "new.txt").exists()
    assert box.call("search_files", {"pattern": "needle"}).text == "src/real.txt:1: needle"
    listing = box.call("list_files", {}).text.splitlines()
    assert "src/real.txt" in listing and not any("alias" in line for line in listing)
    assert box.call("read_file", {"path": "src/real.txt"}).text.splitlines()[1] == "     1\tneedle"
    assert box.call("edit_file", {"path": "src/real.txt", "old_text": "needle", "new_text": "pin"}).text == \
        "edited src/real.txt: 1 replacement"
    assert memrepo.read("src/real.txt") == "pin\n"


@pytest.mark.parametrize("path", ["GITMEM.yaml", "Gitmem.Yaml", "gitmem.yaml.", "gitmem.yaml\u200c", "GITMEM~1.YAM",
                                  "gitmem.yaml/extra.txt"])
def test_every_spelling_of_the_config_is_refused_as_the_cycle_protects_it(box: Toolbox, memrepo: GitRepo,
                                                                          path: str) -> None:
    """Whether a path is gitmem.yaml is decided once (gitmem.agents.protected.is_config): the cycle protected
    these spellings, which a case-insensitive or Unicode-ignoring file system takes for the config, while the
    file tools wrote them; the stricter decision, refusal, now holds for both."""
    from gitmem.agents.protected import Protection, is_config

    config = memrepo.read("gitmem.yaml")
    assert is_config(path) and Protection().covers(path)
    outcome = box.call("write_file", {"path": path, "content": "agent: {}\n"})
    assert outcome.is_error and "steers gitmem" in outcome.text and "ask_decision" in outcome.text
    assert not os.path.lexists(memrepo.path / path) and memrepo.read("gitmem.yaml") == config
