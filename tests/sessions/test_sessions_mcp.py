"""`gitmem mcp` through the real `mcp` client over stdio: the tools and their guards, the resources, how the
server finds its repository, and the clear error outside one."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem import extras
from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log
from gitmem.sessions import mcp_server
from gitmem.sessions.protocol import tool_names
from tests.support.helpers import GitRepo
from tests.support.mcp_client import Answer, call, converse, exchange, list_resources, pause, read, read_refused

ENTRY = {"task": "wire the MCP server", "outcome": "built", "result": "the server answers over stdio",
         "evidence": "tests/sessions/test_sessions_mcp.py"}


def last_entry(repo: GitRepo) -> log.LogEntry:
    return log.parse(repo.read("LOG.md")).entries[-1]


def test_the_tools_are_the_memory_tools_and_teach_the_protocol(memrepo: GitRepo) -> None:
    seen = converse([], cwd=memrepo.path)
    names = [tool.name for tool in seen.tools]
    assert names == list(tool_names())
    assert names == ["log_entry", "now_block", "ask_decision", "add_lesson", "confirm_lesson", "roadmap_done",
                     "recall", "context", "pending", "status"]
    described = {tool.name: tool.description or "" for tool in seen.tools}
    assert "one LOG entry" in described["log_entry"] and "once" in described["log_entry"]
    assert "NOW block" in described["now_block"] and "Once per session" in described["now_block"]
    assert "Only when the task needs the past" in described["recall"]
    assert "Only the human answers" in described["ask_decision"]
    assert "one LOG entry (log_entry) and one NOW block (now_block)" in seen.instructions
    schema = next(tool for tool in seen.tools if tool.name == "log_entry").input_schema
    assert schema["required"] == ["task", "outcome", "result"]


def test_the_help_and_the_readme_name_every_tool_served(cli, tmp_path: Path) -> None:
    """`roadmap_done` was served but named in neither `gitmem mcp --help` nor the README's list."""
    helped = " ".join(cli(["mcp", "--help"], cwd=tmp_path).out.split())
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    listed = readme[readme.index("`gitmem mcp` serves the memory tools"):][:600]
    for name in tool_names():
        assert name in helped, name
        assert f"`{name}`" in listed, name


def test_a_session_writes_its_log_entry_and_now_block_once_each(memrepo: GitRepo) -> None:
    seen = converse([call("log_entry", ENTRY), call("now_block", {"did": "wired MCP", "human": "nothing",
                                                                  "next": "hooks"}),
                     call("log_entry", ENTRY), call("now_block", {"did": "x", "human": "y", "next": "z"})],
                    cwd=memrepo.path)
    first, block, again, again_now = seen.answers
    assert first == Answer("LOG.md: appended " + last_entry(memrepo).heading(), False)
    entry = last_entry(memrepo)
    assert (entry.cycle, entry.outcome, entry.interactive) == (1, "built", True)
    assert entry.get("Session") == "interactive" and entry.get("Evidence") == "tests/sessions/test_sessions_mcp.py"
    assert not block.is_error and "cycle 1" in block.text
    assert again.is_error and "already wrote its LOG entry" in again.text
    assert again_now.is_error and "already wrote its NOW block" in again_now.text
    assert len(log.parse(memrepo.read("LOG.md")).entries) == 1
    assert memrepo.repo.status()["LOG.md"], "files only: nothing staged or committed"


def test_resolving_a_decision_is_refused_and_asking_files_it_pending(memrepo: GitRepo) -> None:
    seen = converse([call("ask_decision", {"title": "Publish to PyPI?", "recommendation": "yes"}),
                     call("answer_decision", {"id": "D-0001", "answer": "yes"}),
                     call("resolve_decision", {"id": "D-0001"})], cwd=memrepo.path)
    asked, answer, resolve = seen.answers
    assert asked == Answer("DECISIONS.md: asked D-0001 · Publish to PyPI?", False)
    for refused in (answer, resolve):
        assert refused.is_error and "only the human answers decisions" in refused.text
    doc = decisions.parse(memrepo.read("DECISIONS.md"))
    assert [d.id for d in doc.pending] == ["D-0001"] and doc.resolved == ()
    assert doc.pending[0].asked_cycle == 1, "numbered by the shared rule: the next cycle"


def test_bad_writes_are_refused_with_the_reason_and_write_nothing(memrepo: GitRepo) -> None:
    before = memrepo.read("LOG.md")
    seen = converse([call("log_entry", {**ENTRY, "outcome": "shipped"}), call("log_entry", {"task": "x"}),
                     call("confirm_lesson", {"id": "L-0042", "evidence": "it held"}),
                     call("no_such_tool", {})], cwd=memrepo.path)
    outcome, missing, lesson, unknown = seen.answers
    assert outcome.is_error and "outcome must be one of built, published, no-build" in outcome.text
    assert missing.is_error and "bad arguments" in missing.text
    assert lesson.is_error and "L-0042" in lesson.text
    assert unknown.is_error and "unknown tool 'no_such_tool'" in unknown.text
    assert memrepo.read("LOG.md") == before


def test_lessons_and_confirmations_go_to_the_open_cycle(memrepo: GitRepo) -> None:
    seen = converse([call("log_entry", ENTRY),
                     call("add_lesson", {"title": "Log first", "happened": "forgot", "why": "rushed",
                                         "change": "log at the end", "rule": "Every session logs"})],
                    cwd=memrepo.path)
    assert not seen.answers[1].is_error, seen.answers[1]
    lesson = lessons.parse(memrepo.read("LESSONS.md")).lessons[-1]
    assert lesson.happened is not None and lesson.happened.cycle == 1, "the open cycle: its LOG entry is uncommitted"


def test_recall_finds_what_memory_holds(memrepo: GitRepo) -> None:
    memrepo.append("LOG.md", "\n## 2026-11-20 10:00 UTC · cycle 1 · built\n- Task: migrate the billing "
                             "webhooks to idempotency keys\n- Result: done\n")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "cycle 1")
    seen = converse([call("recall", {"query": "idempotency webhooks"}), call("recall", {"query": "kubernetes"})],
                    cwd=memrepo.path)
    hit, miss = seen.answers
    assert not hit.is_error and "cycle 1" in hit.text and "idempotency" in hit.text
    assert miss == Answer("no memory of that", False)


def test_context_pending_status_and_the_resources(memrepo: GitRepo) -> None:
    memrepo.write("NOW.md", memrepo.read("NOW.md") + "\n## 2026-11-20 10:00 UTC · cycle 1\n- Did: shipped "
                                                       "hello.py\n- Human: nothing\n- Next: tests\n")
    seen = converse([call("ask_decision", {"title": "Which licence?", "recommendation": "MIT"}),
                     call("context"), call("context", {"full": True}), call("pending"), call("status"),
                     list_resources(), read("gitmem://rules"), read("gitmem://now"),
                     read("gitmem://decisions/pending")], cwd=memrepo.path)
    _, compact, full, pending, status, uris, rules, now, waiting = seen.answers
    assert "## Pending decisions" in compact.text and "D-0001 · Which licence?" in compact.text
    assert len(compact.text) < 9000
    assert "## RULES.md:1-" in full.text and "shipped hello.py" in full.text
    assert pending.text.startswith("D-0001 · Which licence? (0h old, DECISIONS.md:")
    assert '"pending"' in status.text and "Which licence?" in status.text
    assert uris == ["gitmem://rules", "gitmem://now", "gitmem://decisions/pending"]
    assert rules == memrepo.read("RULES.md")
    assert now.startswith("## 2026-11-20 10:00 UTC · cycle 1\n- Did: shipped hello.py")
    assert waiting.startswith("D-0001 · Which licence?")


def test_it_finds_the_repository_from_the_roots_the_client_announces(memrepo: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    seen = converse([call("log_entry", ENTRY)], cwd=home, roots=[tmp_path / "elsewhere", memrepo.path])
    assert seen.answers[0].text.startswith("LOG.md: appended"), seen.answers
    assert last_entry(memrepo).get("Task") == ENTRY["task"]


def test_root_wins_and_an_unexpanded_placeholder_falls_back(memrepo: GitRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    seen = converse([call("now_block", {"did": "a", "human": "b", "next": "c"})], cwd=home,
                    args=("--root", str(memrepo.path)))
    assert not seen.answers[0].is_error, seen.answers
    placeholder = converse([call("pending")], cwd=memrepo.path, args=("--root", "${workspaceFolder}"))
    assert placeholder.answers == [Answer("No decisions are waiting.", False)]


def test_outside_a_memory_repository_it_says_so_and_exits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    errors = tmp_path / "stderr.txt"
    seen = converse([call("status"), pause(mcp_server.GRACE + 2), call("status")], cwd=home, errlog=errors)
    assert seen.answers[0].is_error
    assert "not in a gitmem memory repository" in seen.answers[0].text and "--root" in seen.answers[0].text
    assert len(seen.answers) == 2 and seen.error is not None, "then the server exits"
    assert "gitmem: mcp: not in a gitmem memory repository (looked in: " in errors.read_text()


def test_the_clients_roots_are_quoted_on_one_bounded_line(tmp_path: Path) -> None:
    """The roots are the client's text: a name holding a newline forged a `gitmem:` line of its own on stderr,
    and a thousand roots made one message of a thousand paths, to the client and on stderr alike."""
    home = tmp_path / "home"
    home.mkdir()
    forged = tmp_path / "x\ngitmem: mcp: all is well\x1b[2J"
    forged.mkdir()
    roots = [forged] + [tmp_path / f"root-{n:04d}" for n in range(1000)]
    errors = tmp_path / "stderr.txt"
    seen = converse([call("status")], cwd=home, roots=roots, errlog=errors)
    said = errors.read_text()
    assert said.count("\n") == 1 and said.startswith("gitmem: mcp: not in a gitmem memory repository"), said
    assert "\x1b" not in said and "x\\u000agitmem: mcp: all is well\\u001b[2J" in said
    assert len(said) < 1_000 and "root-0001" in said and "root-0002" not in said, said
    assert "and 998 more of the client's roots, " + str(home.resolve()) in said, said
    answer = seen.answers[0]
    assert answer.is_error and answer.text == said.rstrip("\n")


def test_a_note_on_stderr_masks_the_environments_secret_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's stderr notes quote the client's roots and errors: masked as every message gitmem writes."""
    from gitmem.sessions.mcp_wire import note_line

    monkeypatch.setenv("HERON_DEPLOY_PASSWORD", "qZ4vN8tLw2Xc7RbK5mJd")
    line = note_line("not in a gitmem memory repository: /srv/qZ4vN8tLw2Xc7RbK5mJd/memory")
    assert "qZ4vN8tLw2Xc7RbK5mJd" not in line
    assert line == "gitmem: mcp: not in a gitmem memory repository: /srv/***/memory"


@pytest.mark.parametrize(("closed", "name"), [("<&-", "stdin"), (">&-", "stdout")])
def test_started_without_stdin_or_stdout_it_says_so_and_exits_2(memrepo: GitRepo, closed: str, name: str) -> None:
    """With fd 0 or fd 1 closed there is no client: that was a traceback (exit 70)."""
    import subprocess

    from tests.support.mcp_client import GITMEM

    done = subprocess.run(["sh", "-c", f'exec "{GITMEM}" mcp {closed}'], cwd=memrepo.path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == ExitCode.USAGE and "Traceback" not in done.stderr, done.stderr
    assert f"gitmem: mcp: {name} is not open (Bad file descriptor): an MCP client starts `gitmem mcp` with a pipe" \
           in done.stderr, done.stderr


def test_a_root_outside_a_memory_repository_is_refused_at_once(cli, tmp_path: Path) -> None:
    result = cli(["mcp", "--root", str(tmp_path)], cwd=tmp_path)
    assert result.code == ExitCode.USAGE
    assert "is not in a gitmem memory repository" in result.err and "gitmem init" in result.err


def test_it_serves_without_the_mcp_sdk(memrepo: GitRepo, tmp_path: Path) -> None:
    """The SDK is no part of the server (its import alone took a second): with an `mcp` that cannot be
    imported first on the path, the server still answers, and nothing says it is missing."""
    broken = tmp_path / "shadow" / "mcp"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('the MCP SDK must not be imported by gitmem mcp')\n")
    seen = exchange([b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                     b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pending","arguments":{}}}'],
                    cwd=memrepo.path, env={"PYTHONPATH": str(broken.parent)}, wait_for=(2,))
    assert (seen.returncode, seen.stderr) == (0, "")
    tools, pending = seen.replies[1:]
    assert [tool["name"] for tool in tools["result"]["tools"]] == list(tool_names())
    assert pending["result"] == {"content": [{"type": "text", "text": "No decisions are waiting."}], "isError": False}
    assert not extras.EXTRAS["agents"][0] == "mcp", "the agents extra no longer stands for the MCP SDK"


def test_inside_a_runner_cycle_writes_take_the_cycle_number_and_no_session_marker(memrepo: GitRepo) -> None:
    seen = converse([call("log_entry", ENTRY)], cwd=memrepo.path, env={"GITMEM_CYCLE": "7"})
    assert not seen.answers[0].is_error
    entry = last_entry(memrepo)
    assert (entry.cycle, entry.interactive, entry.get("Session")) == (7, False, None)


def test_roots_become_local_paths() -> None:
    roots = [{"uri": "file:///home/ada/my%20agent"}, {"uri": "file:///srv/memory"}, {"uri": "https://x.test/"},
             {"uri": 5}, "file:///not/an/object", {}]
    assert mcp_server.roots_to_paths(roots) == ["/home/ada/my agent", "/srv/memory"]
    assert mcp_server.roots_to_paths({"uri": "file:///x"}) == []


def test_outside_a_memory_repository_the_process_exits_with_code_2(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.support.mcp_client import GITMEM, HELLO, READY

    server = subprocess.Popen([str(GITMEM), "mcp"], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert server.stdin is not None
    server.stdin.write(json.dumps(HELLO) + "\n" + json.dumps(READY) + "\n")
    server.stdin.flush()
    out, err = server.communicate(timeout=60)
    assert server.returncode == ExitCode.USAGE
    assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "gitmem"
    assert "not in a gitmem memory repository" in err


def test_workspace_selects_whose_memory_the_tools_write(memrepo: GitRepo) -> None:
    from gitmem.scaffold.init import template_dir

    files = {f"agents/writer/{name}": (template_dir() / name).read_text()
             for name in ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md")}
    memrepo.commit_files({**files, "gitmem.yaml": memrepo.read("gitmem.yaml") + "\nworkspaces:\n  writer:\n"
                                                                                 "    memory_dir: agents/writer\n"},
                         "a second agent")
    seen = converse([call("log_entry", ENTRY)], cwd=memrepo.path, args=("--workspace", "writer"))
    assert seen.answers[0].text.startswith("agents/writer/LOG.md: appended")
    assert log.parse(memrepo.read("agents/writer/LOG.md")).entries[-1].get("Task") == ENTRY["task"]
    assert log.parse(memrepo.read("LOG.md")).entries == ()


def test_a_session_that_logs_confirms_and_commits_as_the_human_is_backed(memrepo: GitRepo) -> None:
    """The memory semantics hold for sessions: a confirmation counts when its commit adds the session's entry."""
    from gitmem.close.backing import Backing

    lesson = {"title": "Tests first", "happened": "h", "why": "w", "change": "c", "rule": "Write the test first"}
    converse([call("log_entry", ENTRY), call("add_lesson", lesson)], cwd=memrepo.path)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md"), "LESSONS.md": memrepo.read("LESSONS.md")}, "session 1")
    converse([call("confirm_lesson", {"id": "L-0001", "evidence": "the test caught it"}), call("log_entry", ENTRY)],
             cwd=memrepo.path)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md"), "LESSONS.md": memrepo.read("LESSONS.md")}, "session 2")
    item = lessons.parse(memrepo.read("LESSONS.md")).find("L-0001")
    assert item is not None and [event.cycle for _, event in item.confirmations if event] == [2]
    assert Backing(memrepo.ws())(item, item.confirmations[0][0]).ok


def test_a_reader_that_fails_answers_with_the_reason(memrepo: GitRepo) -> None:
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("max_context_tokens: 60000",
                                                                               "max_context_tokens: 300")}, "tiny")
    seen = converse([call("context", {"full": True}), call("context")], cwd=memrepo.path)
    full, compact = seen.answers
    assert full.is_error and "over the hard limit" in full.text
    assert not compact.is_error and "## Proven rules" in compact.text


def test_a_broken_config_found_through_the_roots_is_named(memrepo: GitRepo, tmp_path: Path) -> None:
    memrepo.write("gitmem.yaml", "limits: [not, a, mapping]\n")
    home = tmp_path / "home"
    home.mkdir()
    seen = converse([call("status")], cwd=home, roots=[memrepo.path])
    assert seen.answers[0].is_error and "gitmem.yaml" in seen.answers[0].text


def test_only_the_listed_tools_are_served(memrepo: GitRepo) -> None:
    before = memrepo.read("NOW.md")
    seen = converse([call("write_file", {"path": "evil.txt", "content": "x"}),
                     call("read_file", {"path": "gitmem.yaml"}), call("run_command", {"command": "true"})],
                    cwd=memrepo.path)
    for answer in seen.answers:
        assert answer.is_error and "unknown tool" in answer.text and "log_entry" in answer.text
    assert not (memrepo.path / "evil.txt").exists() and memrepo.read("NOW.md") == before


@pytest.mark.parametrize("uri", ["gitmem://nothing", "gitmem://rules/../now", "file:///etc/passwd",
                                 "gitmem://" + "x" * 5000])
def test_an_unknown_resource_is_a_json_rpc_error_and_nothing_on_stderr(memrepo: GitRepo, tmp_path: Path,
                                                                        uri: str) -> None:
    errlog = tmp_path / "stderr.txt"
    seen = converse([read_refused(uri), read("gitmem://rules")], cwd=memrepo.path, errlog=errlog)
    assert seen.error is None, seen.error
    refused, rules = seen.answers
    assert refused.startswith("unknown resource") and "gitmem://rules" in refused
    assert rules == memrepo.read("RULES.md")            # the session goes on
    assert errlog.read_text() == ""


def ping(ident: int, params: str = "{}") -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":%s}' % (ident, params.encode())


def test_a_line_it_cannot_parse_is_answered_with_a_parse_error_and_the_server_goes_on(memrepo: GitRepo) -> None:
    from gitmem.config.nesting import MAX_DEPTH
    from gitmem.sessions.mcp_wire import MAX_LINE_BYTES

    def nested(levels: int, opening: str, closing: str) -> str:
        return '{"x":' + opening * levels + "1" + closing * levels + "}"

    refused = [ping(1, nested(300, '{"a":', "}")), ping(2, nested(300, "[", "]")),
               ping(3, nested(100_000, "[", "]")), ping(4, '{"pad":"%s"}' % ("x" * MAX_LINE_BYTES)),
               b'{"jsonrpc":"2.0","id":5,"method":"ping"', b"not json", b'{"id":6,"method":"ping"}\xff\xfe{',
               b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"log_entry","arguments":'
               b'{"task":"a\\ud800","outcome":"built","result":"r"}}}']
    passed = [ping(10, nested(MAX_DEPTH - 3, "[", "]")), ping(11, '{"pad":"%s"}' % ("x" * 100_000)), b"", b"  ",
              b'{"jsonrpc":"2.0","id":12,"method":"resources/list"}']
    seen = exchange(refused[:4] + passed[:2] + refused[4:] + passed[2:], cwd=memrepo.path)
    assert (seen.returncode, seen.stderr) == (0, "")
    errors = [reply for reply in seen.replies if "error" in reply]
    assert [(reply["id"], reply["error"]["code"]) for reply in errors] == [(None, -32700)] * len(refused)
    reasons = [reply["error"]["message"] for reply in errors]
    assert reasons[:3] == [f"Parse error: nested deeper than {MAX_DEPTH} levels"] * 3
    assert reasons[3] == f"Parse error: a line longer than {MAX_LINE_BYTES} bytes"
    assert all(reason.startswith("Parse error: ") for reason in reasons[4:])
    assert "lone surrogate" in reasons[-1]             # the SDK's own parser dropped it unanswered
    answered = {reply["id"]: reply for reply in seen.replies if "result" in reply}
    assert sorted(answered) == [0, 10, 11, 12]            # the server went on after each refusal
    assert "gitmem://rules" in [item["uri"] for item in answered[12]["result"]["resources"]]


def _served_from_a_removed_directory(tmp_path: Path, roots: list[Path] | None) -> tuple[list[dict[str, Any]], str, int]:
    """`gitmem mcp` started in a working directory removed before it searches (a shell left in a deleted folder
    starts the host there): initialize (announcing roots when given, and answering roots/list with them), then one
    `pending` call; the replies to our requests, stderr and the exit code."""
    import subprocess

    from tests.support.mcp_client import GITMEM, HELLO, READY

    gone = tmp_path / "removed"
    gone.mkdir()
    hello = HELLO if roots is None else {**HELLO, "params": {**HELLO["params"], "capabilities": {"roots": {}}}}
    server = subprocess.Popen(["sh", "-c", 'cd "$1" && rmdir "$1" && exec "$2" mcp', "sh", str(gone), str(GITMEM)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()

    send(hello)
    send(READY)
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pending", "arguments": {}}})
    replies = []
    started = time.monotonic()
    while line := server.stdout.readline():
        message = json.loads(line)
        if message.get("method") == "roots/list":
            send({"jsonrpc": "2.0", "id": message["id"],
                  "result": {"roots": [{"uri": root.as_uri(), "name": root.name} for root in roots or []]}})
            continue
        replies.append(message)
        if message.get("id") == 1:
            break
    elapsed = time.monotonic() - started
    server.stdin.close()
    code = server.wait(timeout=60)
    assert elapsed < 10, f"the call waited {elapsed:.1f} s for a search that had died"
    return replies, server.stderr.read().decode(errors="replace"), code


def test_a_removed_working_directory_costs_the_clients_roots_nothing(memrepo: GitRepo, tmp_path: Path) -> None:
    """The working directory is only the last place looked: asking for it raised in the search, which died with a
    traceback, so a client whose root is the memory repository got "not found yet" after 15 s, every call."""
    replies, stderr, code = _served_from_a_removed_directory(tmp_path, [memrepo.path])
    assert replies[-1]["result"] == {"content": [{"type": "text", "text": "No decisions are waiting."}],
                                     "isError": False}
    assert "Traceback" not in stderr and code == 0


def test_a_removed_working_directory_and_no_roots_is_outside_a_memory_repository(tmp_path: Path) -> None:
    replies, stderr, code = _served_from_a_removed_directory(tmp_path, None)
    said = replies[-1]["result"]
    assert said["isError"] and "not in a gitmem memory repository" in said["content"][0]["text"]
    assert "the working directory (it is gone)" in said["content"][0]["text"]
    assert "Traceback" not in stderr and code == 2
