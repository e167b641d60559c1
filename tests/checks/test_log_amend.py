"""A bad entry on main has a way out: memory is judged as it stands, and an amendment supersedes the entry.

Each test starts from real repositories: a human's clone whose `main` holds a LOG entry with a malformed
heading, committed without the check (as `git commit --no-verify` or a web edit merged without it does) and
pushed to a bare origin, and the runner's own clone of that origin.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.cycle_support import clone, is_clean, origin_and_clone, pull
from tests.support.gitcli import git
from tests.support.helpers import AGENT, GitRepo
from tests.support.mcp_client import call, converse

SCRIPT = """\
cycles:
  default:
    - tool: write_file
      input: {path: notes.md, content: "cycle {{cycle}}\\n"}
    - tool: log_entry
      input: {task: write notes.md, outcome: built, result: notes.md exists}
    - tool: now_block
      input: {did: wrote notes.md, human: nothing, next: more notes}
"""
BAD_HEADING = "## 2026-12-05 11:00 cycle 2 built"       # no zone, no separators: no reader finds the entry
BAD_ENTRY = f"\n{BAD_HEADING}\n- Task: tune the zebra crossing\n- Result: the crossing blinks\n"
AMEND = ["--task", "tune the zebra crossing", "--outcome", "built", "--result", "the crossing blinks"]


@dataclass
class Scene:
    human: GitRepo         # the clone where the bad entry was committed and pushed
    runner: GitRepo        # the scheduled runner's clone
    origin: Path
    first: str             # the first commit: `verify` checks from here
    bad: int               # the malformed heading's line in LOG.md


def _line_of(text: str, prefix: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(prefix))


def _stage_and_commit(repo: GitRepo, message: str, *paths: str) -> None:
    repo.stage(*paths)
    repo.commit(message)


@pytest.fixture
def scene(tmp_path: Path, memrepo: GitRepo, cli) -> Scene:
    first = memrepo.head()
    memrepo.commit_files({
        "agent-script.yaml": SCRIPT,
        "gitmem.yaml": memrepo.read("gitmem.yaml").replace("  # backend: anthropic",
                                                           "  backend: scripted\n  script: agent-script.yaml"),
    }, "use the scripted agent")
    assert cli(["log", "add", "--task", "set up", "--outcome", "built", "--result", "memory exists"],
               cwd=memrepo.path).code == ExitCode.OK
    _stage_and_commit(memrepo, "cycle 1", "LOG.md")
    memrepo.append("LOG.md", BAD_ENTRY)
    _stage_and_commit(memrepo, "log by hand, without the check", "LOG.md")      # what --no-verify commits
    origin = origin_and_clone(tmp_path, memrepo)
    runner = clone(origin, tmp_path / "runner", AGENT)
    return Scene(memrepo, runner, origin, first, _line_of(memrepo.read("LOG.md"), BAD_HEADING))


def _amend(cli, scene: Scene, *extra: str) -> None:
    result = cli(["log", "amend", "--line", str(scene.bad), *AMEND, *extra], cwd=scene.human.path)
    assert result.code == ExitCode.OK, result.err
    assert cli(["check"], cwd=scene.human.path).code == ExitCode.OK        # the staged change: nothing yet
    scene.human.stage("LOG.md")
    assert cli(["check"], cwd=scene.human.path).code == ExitCode.OK, "the amendment passes the pre-commit check"
    scene.human.commit("amend the hand-written entry")
    git(scene.human.path, "push", "--quiet", "origin", "main")


def test_the_cycle_refuses_invalid_memory_on_main_naming_the_line_and_the_fix(scene: Scene, cli) -> None:
    before = scene.runner.head()
    result = cli(["cycle", "--push"], cwd=scene.runner.path)
    assert result.code == ExitCode.DIRTY
    assert f"LOG.md:{scene.bad}: GM306 malformed LOG heading `{BAD_HEADING}`" in result.err
    assert f"gitmem log amend --line {scene.bad}" in result.err
    assert scene.runner.head() == before and is_clean(scene.runner)
    as_json = cli(["cycle", "--json"], cwd=scene.runner.path)
    assert as_json.code == ExitCode.DIRTY
    codes = [v["code"] for v in json.loads(as_json.out)["violations"]]
    assert codes == ["GM705", "GM306"]


def test_status_shows_invalid_memory_with_its_repair(scene: Scene, cli) -> None:
    result = cli(["status"], cwd=scene.runner.path)
    assert result.code == ExitCode.OK
    assert "1 error(s) in memory as it stands: the next cycle refuses to start" in result.out
    assert f"LOG.md:{scene.bad}: GM306 malformed LOG heading" in result.out
    assert f"fix: supersede it with an amendment: `gitmem log amend --line {scene.bad}" in result.out
    data = json.loads(cli(["status", "--json"], cwd=scene.runner.path).out)
    assert [(item["path"], item["line"], item["code"]) for item in data["invalid"]] == [("LOG.md", scene.bad,
                                                                                         "GM306")]


def test_log_add_and_the_mcp_tool_refuse_to_append_after_invalid_memory(scene: Scene, cli) -> None:
    before = scene.human.read("LOG.md")
    result = cli(["log", "add", "--task", "more", "--outcome", "built", "--result", "done"], cwd=scene.human.path)
    assert result.code == ExitCode.VIOLATIONS
    assert "refusing to append to LOG.md: it holds invalid entries; amend them first" in result.err
    assert f"LOG.md:{scene.bad}: GM306" in result.err and f"gitmem log amend --line {scene.bad}" in result.err
    seen = converse([call("log_entry", {"task": "more", "outcome": "built", "result": "done"})],
                    cwd=scene.human.path)
    (answer,) = seen.answers
    assert answer.is_error and f"LOG.md:{scene.bad}: GM306" in answer.text and "amend them first" in answer.text
    assert scene.human.read("LOG.md") == before


def test_an_amendment_repairs_main_for_the_cycle_verify_status_recall_and_the_context(scene: Scene, cli) -> None:
    old = scene.human.read("LOG.md")
    _amend(cli, scene)
    text = scene.human.read("LOG.md")
    assert text.startswith(old), "LOG stays append-only"
    amendment = log.parse(text).entries[-1]
    assert (amendment.amends, amendment.cycle, amendment.outcome) == (scene.bad, 2, "built")
    assert amendment.heading().endswith(f"· amends line {scene.bad} · cycle 2 · built")
    # verify accepts the whole history, the hand-written commit included: the amendment stands in its place.
    assert cli(["verify", "--range", f"{scene.first}..HEAD"], cwd=scene.human.path).code == ExitCode.OK
    assert "invalid" not in cli(["status"], cwd=scene.human.path).out
    found = cli(["recall", "zebra crossing", "--json"], cwd=scene.human.path)
    hits = json.loads(found.out)
    assert [hit["line"] for hit in hits["hits"]][:1] == [amendment.line]
    context = cli(["context"], cwd=scene.human.path).out
    assert "tune the zebra crossing" in context and f"amends line {scene.bad}" in context
    pull(scene.runner)
    ran = cli(["cycle", "--push"], cwd=scene.runner.path)
    assert ran.code == ExitCode.OK, ran.err
    after = log.parse(scene.runner.read("LOG.md"))
    assert [e.cycle for e in log.live(after.entries)] == [1, 2, 3]
    tip = pygit2.Repository(str(scene.origin)).revparse_single("refs/heads/main").id
    assert str(tip) == scene.runner.head()
    assert cli(["verify", "--range", f"{scene.first}..HEAD"], cwd=scene.runner.path).code == ExitCode.OK


def test_verify_still_names_the_bad_entry_in_a_range_that_ends_before_its_amendment(scene: Scene, cli) -> None:
    result = cli(["verify", "--range", f"{scene.first}..HEAD"], cwd=scene.human.path)
    assert result.code == ExitCode.VIOLATIONS
    assert f"LOG.md:{scene.bad}: GM306" in result.out


def test_an_amendment_must_name_an_invalid_entry_above_it(scene: Scene, cli) -> None:
    text = scene.human.read("LOG.md")
    valid = next(e.line for e in log.parse(text).entries)
    cases = {valid: "whose entry is valid", 2: "which is not the heading of an entry above this one",
             scene.bad + 1: "which is not the heading of an entry above this one",
             9999: "which is not the heading of an entry above this one"}
    for line, said in cases.items():
        result = cli(["log", "amend", "--line", str(line), *AMEND], cwd=scene.human.path)
        assert result.code == ExitCode.VIOLATIONS, line
        assert f"GM313 amends line {line}, {said}" in result.err
        assert scene.human.read("LOG.md") == text
    _amend(cli, scene)
    again = cli(["log", "amend", "--line", str(scene.bad), *AMEND], cwd=scene.human.path)
    assert again.code == ExitCode.VIOLATIONS and "which line" in again.err and "already amends" in again.err


def test_a_hand_written_amendment_of_a_valid_entry_fails_check_and_verify(scene: Scene, cli) -> None:
    _amend(cli, scene)
    # A cycle's commit carries the rules generation (Gitmem-Rules: 4): every commit after it is held to them.
    pull(scene.runner)
    assert cli(["cycle", "--push"], cwd=scene.runner.path).code == ExitCode.OK
    pull(scene.human)
    valid = log.parse(scene.human.read("LOG.md")).entries[0]
    stamp = log.parse(scene.human.read("LOG.md")).entries[-1].when
    scene.human.append("LOG.md", f"\n## {stamp} · amends line {valid.line} · cycle 3 · built\n- Task: rewrite "
                                 "history\n- Result: cycle 1 said something else\n")
    scene.human.stage("LOG.md")
    checked = cli(["check"], cwd=scene.human.path)
    assert checked.code == ExitCode.VIOLATIONS
    assert f"GM313 amends line {valid.line}, whose entry is valid" in checked.out
    scene.human.commit("rewrite cycle 1 by amendment")
    verified = cli(["verify", "--range", f"{scene.first}..HEAD"], cwd=scene.human.path)
    assert verified.code == ExitCode.VIOLATIONS and "GM313" in verified.out and "GM306" not in verified.out


def test_a_wrong_entry_with_a_valid_heading_is_amended_and_readers_drop_it(tmp_path: Path, memrepo: GitRepo,
                                                                          cli) -> None:
    first = memrepo.head()
    assert cli(["log", "add", "--task", "set up", "--outcome", "built", "--result", "ok"],
               cwd=memrepo.path).code == ExitCode.OK
    stamp = log.parse(memrepo.read("LOG.md")).entries[-1].when
    memrepo.append("LOG.md", f"\n## {stamp} · cycle 1 · built\n- Task: quokka census\n- Result: counted\n")
    _stage_and_commit(memrepo, "two entries, one number (without the check)", "LOG.md")
    wrong = log.parse(memrepo.read("LOG.md")).entries[-1].line
    status = cli(["status"], cwd=memrepo.path)
    assert "invalid" not in status.out      # its heading is well formed: readers find it; verify names it
    assert cli(["verify", "--range", f"{first}..HEAD"], cwd=memrepo.path).code == ExitCode.VIOLATIONS
    result = cli(["log", "amend", "--line", str(wrong), "--task", "quokka census", "--outcome", "built",
                  "--result", "counted 12 quokkas"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _stage_and_commit(memrepo, "amend the duplicate", "LOG.md")
    assert cli(["verify", "--range", f"{first}..HEAD"], cwd=memrepo.path).code == ExitCode.OK
    assert [e.cycle for e in log.live(log.parse(memrepo.read("LOG.md")).entries)] == [1, 2]
    context = cli(["context"], cwd=memrepo.path).out
    assert "counted 12 quokkas" in context and "- Result: counted\n" not in context
    hits = json.loads(cli(["recall", "quokka", "--json"], cwd=memrepo.path).out)["hits"]
    amendment = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert [hit["line"] for hit in hits if hit["path"] == "LOG.md"] == [amendment.line]


def test_a_malformed_now_heading_on_main_is_shown_refused_and_fixed_in_place(scene: Scene, cli) -> None:
    _amend(cli, scene)
    now_text = scene.human.read("NOW.md")
    stamp = log.parse(scene.human.read("LOG.md")).entries[-1].when
    scene.human.write("NOW.md", now_text.replace("# NOW\n", f"# NOW\n\n## {stamp} cycle 2\n- Did: x\n- Human: y\n"
                                                             "- Next: z\n", 1))
    _stage_and_commit(scene.human, "NOW by hand, without the check", "NOW.md")
    bad = _line_of(scene.human.read("NOW.md"), f"## {stamp} cycle 2")
    assert f"NOW.md:{bad}: GM102" in cli(["status"], cwd=scene.human.path).out
    refused = cli(["cycle"], cwd=scene.human.path)
    assert refused.code == ExitCode.DIRTY and f"NOW.md:{bad}: GM102" in refused.err
    scene.human.write("NOW.md", scene.human.read("NOW.md").replace(f"## {stamp} cycle 2", f"## {stamp} · cycle 2"))
    scene.human.stage("NOW.md")
    assert cli(["check"], cwd=scene.human.path).code == ExitCode.OK
    scene.human.commit("fix the NOW heading in place")
    assert cli(["cycle"], cwd=scene.human.path).code == ExitCode.OK


@pytest.mark.parametrize("argv", [
    ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
    ["log", "amend", "--line", "3", "--task", "t", "--outcome", "built", "--result", "r"],
    ["now", "add", "--did", "d", "--human", "h", "--next", "n"],
    ["decision", "ask", "--title", "t?", "--recommendation", "r"],
    ["lesson", "add", "--title", "t", "--happened", "h", "--why", "w", "--change", "c"],
], ids=lambda argv: " ".join(argv[:2]))
def test_memory_writes_outside_a_memory_repository_are_refused(tmp_path: Path, git_env: None, cli,
                                                                argv: list[str]) -> None:
    plain = tmp_path / "plain"
    pygit2.init_repository(str(plain), initial_head="main")
    result = cli(argv, cwd=plain)
    assert result.code == ExitCode.USAGE
    assert "no gitmem memory here" in result.err and "run `gitmem init`" in result.err
    assert sorted(p.name for p in plain.iterdir()) == [".git"]


def test_memory_as_it_stands_is_read_as_the_parser_reads_it_crlf_and_fenced_code_included() -> None:
    from gitmem.checks.standing import log_standing

    entry = "## 2026-12-05 10:00 UTC · cycle {n} · built\n- Task: t\n- Result: r\n\n"
    clean = "# LOG\n\n" + entry.format(n=1) + "```\n## not a heading, code\n```\n\n" + entry.format(n=2)
    assert log_standing("LOG.md", clean.encode()) == []
    assert log_standing("LOG.md", clean.replace("\n", "\r\n").encode()) == []      # CRLF is accepted (GM905)
    bad = (clean + BAD_ENTRY).replace("\n", "\r\n").encode()
    assert [(v.line, v.code) for v in log_standing("LOG.md", bad)] == [(_line_of(clean + BAD_ENTRY, BAD_HEADING),
                                                                       "GM306")]
