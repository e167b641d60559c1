"""`gitmem mcp`'s own JSON-RPC side, proven against the MCP SDK's client and against raw lines: the handshake and
its version negotiation, ping, the JSON-RPC error codes, cancellation, and a bounded, prompt answer to every
hostile call (wrong types, nulls, huge and nested arguments, an unbounded recall)."""
from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from gitmem.agents.schemas import MAX_TEXT
from gitmem.recall.query import MAX_COMPOUND, MAX_QUERY
from gitmem.sessions.mcp_server import PROTOCOL_VERSIONS
from tests.support.helpers import GitRepo
from tests.support.mcp_client import HELLO, READY, Answer, call, converse, exchange

ENTRY = {"task": "t", "outcome": "built", "result": "r"}


def request(ident: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def tool(ident: Any, name: str, arguments: Any) -> bytes:
    return request(ident, "tools/call", {"name": name, "arguments": arguments})


def by_id(replies: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {reply["id"]: reply for reply in replies}


def test_the_sdk_client_pings_and_reads_json_rpc_errors(memrepo: GitRepo) -> None:
    from mcp.shared.exceptions import MCPError

    async def ping(session: Any) -> str:
        await session.send_ping()
        return "pong"

    async def unknown_method(session: Any) -> tuple[int, str]:
        try:
            await session.list_prompts()
        except MCPError as err:
            return err.error.code, err.error.message
        raise AssertionError("answered")

    async def templates(session: Any) -> int:
        return len((await session.list_resource_templates()).resource_templates)

    seen = converse([ping, unknown_method, templates, call("pending")], cwd=memrepo.path)
    assert seen.error is None, seen.error
    assert seen.answers == ["pong", (-32601, "Method not found: prompts/list"), 0,
                            Answer("No decisions are waiting.", False)]


def test_the_sdk_client_cancels_a_call_and_the_session_goes_on(memrepo: GitRepo) -> None:
    """A request the client gives up on (its timeout) is cancelled; a receiver does not answer a cancelled
    request, and the next call is answered."""
    async def cancelled(session: Any) -> str:
        with anyio.move_on_after(0.001):
            await session.call_tool("status", {})
            return "answered"
        return "cancelled"

    seen = converse([cancelled, call("pending")], cwd=memrepo.path)
    assert seen.error is None, seen.error
    assert seen.answers[1] == Answer("No decisions are waiting.", False)


def test_a_cancelled_request_is_not_answered(memrepo: GitRepo) -> None:
    cancel = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 5, "reason": "the user pressed escape"}}).encode()
    seen = exchange([tool(4, "status", {}), tool(5, "log_entry", ENTRY), cancel, request(6, "ping"),
                     tool(7, "pending", {})], cwd=memrepo.path, wait_for=(4, 7))
    assert 5 not in by_id(seen.replies)
    assert by_id(seen.replies)[6]["result"] == {} and not by_id(seen.replies)[7]["result"]["isError"]
    assert (seen.returncode, seen.stderr) == (0, "")


@pytest.mark.parametrize(("asked", "served"), [(version, version) for version in PROTOCOL_VERSIONS]
                         + [("1999-01-01", PROTOCOL_VERSIONS[0]), (None, PROTOCOL_VERSIONS[0]),
                            (7, PROTOCOL_VERSIONS[0])])
def test_the_protocol_version_is_negotiated(memrepo: GitRepo, asked: Any, served: str) -> None:
    hello = {**HELLO["params"], "protocolVersion": asked}
    seen = exchange([request(1, "initialize", hello)], cwd=memrepo.path)
    result = by_id(seen.replies)[1]["result"]
    assert result["protocolVersion"] == served
    assert result["serverInfo"]["name"] == "gitmem" and "tools" in result["capabilities"]


def test_bad_requests_get_the_json_rpc_error_codes(memrepo: GitRepo) -> None:
    lines = [request(1, "no/such/method"), request(2, "tools/list", [1, 2]), request(3, "tools/call", {}),
             request(4, "tools/call", {"name": 5}), request(5, "resources/read", {}),
             request(6, "resources/read", {"uri": "gitmem://nothing"}),
             b'{"id":7,"method":"ping"}', b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]', b"5",
             b'{"jsonrpc":"2.0","id":[9],"method":"ping"}', b'{"jsonrpc":"2.0","id":10,"method":7}',
             b'{"jsonrpc":"2.0","method":"notifications/unknown"}', b'{"jsonrpc":"2.0","id":"x","result":{}}',
             b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
             tool(11, "log_entry", [1, 2])]
    seen = exchange(lines, cwd=memrepo.path, wait_for=(6, 11))
    answered = {reply["id"]: reply["error"]["code"] for reply in seen.replies if "error" in reply and reply["id"]}
    assert answered == {1: -32601, 2: -32602, 3: -32602, 4: -32602, 5: -32602, 6: -32002, 7: -32600, 10: -32600}
    anonymous = [reply["error"] for reply in seen.replies if reply["id"] is None]
    assert [error["code"] for error in anonymous] == [-32600, -32600, -32600]
    assert "batch" in anonymous[0]["message"]
    refused = by_id(seen.replies)[11]["result"]
    assert refused["isError"] and "the arguments must be an object, not an array" in refused["content"][0]["text"]
    assert (seen.returncode, seen.stderr) == (0, "")


HOSTILE: list[tuple[str, Any, str]] = [
    ("log_entry", {**ENTRY, "task": 5}, "task must be a string, not an integer"),
    ("log_entry", {**ENTRY, "task": None}, "missing required argument 'task'"),
    ("log_entry", {**ENTRY, "outcome": ["built"]}, "outcome must be a string, not an array"),
    ("log_entry", {**ENTRY, "result": {"a": {"b": {"c": [1, [2, [3]]]}}}}, "result must be a string, not an object"),
    ("log_entry", {**ENTRY, "tried": True}, "tried must be a string, not a boolean"),
    ("log_entry", {**ENTRY, "task": "x" * (MAX_TEXT + 1)}, f"task is {MAX_TEXT + 1} characters; the limit is"),
    ("log_entry", {**ENTRY, "extra": 1}, "unknown argument 'extra'"),
    ("now_block", {"did": 1.5, "human": "h", "next": "n"}, "did must be a string, not a number"),
    ("recall", {"query": "x", "limit": "3"}, "limit must be an integer, not a string"),
    ("recall", {"query": "x", "limit": 10 ** 30}, "limit must be at most 100"),
    ("recall", {"query": "x", "limit": 0}, "limit must be at least 1"),
    ("recall", {"query": ["x"] * 10_000}, "query must be a string, not an array"),
    ("recall", {"query": "word " * (MAX_QUERY // 5 + 1)}, f"the limit is {MAX_QUERY}"),
    ("context", {"full": "yes"}, "full must be a boolean, not a string"),
    ("pending", {"x": None}, "unknown argument 'x'; the arguments are: none"),
    ("confirm_lesson", None, "missing required argument 'id'"),
]


def test_every_hostile_call_gets_a_prompt_clear_answer_and_writes_nothing(memrepo: GitRepo) -> None:
    before = {name: memrepo.read(name) for name in ("LOG.md", "NOW.md", "LESSONS.md")}
    started = time.monotonic()
    seen = exchange([tool(n, name, arguments) for n, (name, arguments, _) in enumerate(HOSTILE)], cwd=memrepo.path,
                    wait_for=tuple(range(len(HOSTILE))))
    assert time.monotonic() - started < 20, "answered promptly, whatever the arguments"
    answers = by_id(seen.replies)
    for n, (name, _, reason) in enumerate(HOSTILE):
        result = answers[n]["result"]
        assert result["isError"] and reason in result["content"][0]["text"], (name, result)
    assert {name: memrepo.read(name) for name in before} == before
    assert (seen.returncode, seen.stderr) == (0, "")


def test_a_query_of_100_kb_is_refused_at_once_by_the_cli(cli, memrepo: GitRepo) -> None:
    """Recall's compound search cost the square of a word's length: a 100 KB word took 35 s."""
    started = time.monotonic()
    result = cli(["recall", "find", "a" * 100_000], cwd=memrepo.path)
    assert time.monotonic() - started < 10
    assert result.code == 2
    assert f"gitmem: recall: the query is 100005 characters; the limit is {MAX_QUERY}: search for a few words" \
           in result.err
    assert cli(["recall", "word " * (MAX_QUERY // 5)], cwd=memrepo.path).code == 0


def statements(memrepo: GitRepo, query: str) -> int:
    """How many SQL statements analysing `query` runs on the index (each a tokenizer pass or a lookup)."""
    from gitmem.recall.index import Index
    from gitmem.recall.query import analyze

    index = Index(memrepo.ws())
    try:
        conn = index.refresh()
        count = [0]
        conn.set_trace_callback(lambda sql: count.__setitem__(0, count[0] + 1))
        analyze(conn, query)
        conn.set_trace_callback(None)
        return count[0]
    finally:
        index.close()


def test_a_long_word_costs_what_a_short_one_costs(memrepo: GitRepo) -> None:
    """A word past MAX_COMPOUND is looked for as it is, not cut at each of its letters: the statements a word
    costs do not grow with its length (a 2,000-letter word ran about 4,000 before)."""
    compound, long, longer = (statements(memrepo, "q" * size) for size in (MAX_COMPOUND, 2_000, 19_000))
    assert long < 60 < 2 * MAX_COMPOUND < compound, (long, compound)
    assert abs(longer - long) < 5


def test_the_mcp_recall_of_a_long_word_is_prompt(memrepo: GitRepo) -> None:
    started = time.monotonic()
    seen = exchange([tool(1, "recall", {"query": "w" * 19_000})], cwd=memrepo.path, wait_for=(1,))
    assert time.monotonic() - started < 10
    assert by_id(seen.replies)[1]["result"]["content"][0]["text"] == "no memory of that"


def test_calls_wait_in_line_but_quick_requests_do_not(memrepo: GitRepo) -> None:
    """The lists and ping are answered at once even while tool calls run one after another."""
    lines = [tool(n, "status", {}) for n in range(3)] + [request("list", "tools/list"), request("p", "ping")]
    seen = exchange(lines, cwd=memrepo.path, wait_for=(0, 1, 2))
    order = [reply["id"] for reply in seen.replies]
    assert order.index("list") < order.index(2) and order.index("p") < order.index(2)


def test_a_client_that_never_lists_its_roots_is_served_from_the_working_directory(memrepo: GitRepo) -> None:
    """A client may announce roots and never answer roots/list: the search gives up on the roots before the
    first call gives up on the search (both waited 15 s, and the call lost: "not found yet")."""
    hello = {**HELLO, "params": {**HELLO["params"], "capabilities": {"roots": {"listChanged": True}}}}
    seen = exchange([tool(1, "pending", {})], cwd=memrepo.path, wait_for=(1,), hello=hello)
    assert [reply["method"] for reply in seen.replies if "method" in reply] == ["roots/list"]
    assert by_id(seen.replies)[1]["result"] == {"content": [{"type": "text", "text": "No decisions are waiting."}],
                                                "isError": False}
    assert "the client's roots could not be listed (no answer to roots/list" in seen.stderr


def test_a_client_that_stops_reading_leaves_a_server_that_still_ends(memrepo: GitRepo) -> None:
    """A host that closes its end of the server's stdout: the reply that failed killed the worker with a
    traceback, and the server then never ended, even after stdin closed (an orphan per crashed session)."""
    import os
    import subprocess

    from tests.support.mcp_client import GITMEM

    replies, ours = os.pipe()
    server = subprocess.Popen([str(GITMEM), "mcp"], cwd=memrepo.path, stdin=subprocess.PIPE, stdout=ours,
                              stderr=subprocess.PIPE)
    os.close(ours)
    os.close(replies)                    # nobody reads the replies
    assert server.stdin is not None and server.stderr is not None
    server.stdin.write(b"\n".join([json.dumps(HELLO).encode(), json.dumps(READY).encode(), request(1, "ping"),
                                    tool(2, "pending", {}), tool(3, "status", {})]) + b"\n")
    server.stdin.close()
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        code = None
    said = server.stderr.read().decode()
    assert code == 0, said
    assert "Traceback" not in said and said.count("the client stopped reading the replies") == 1, said


def test_a_session_notified_before_initialize_is_still_served(memrepo: GitRepo) -> None:
    seen = exchange([json.dumps(READY).encode(), tool(1, "pending", {})], cwd=memrepo.path, wait_for=(1,))
    assert by_id(seen.replies)[1]["result"]["content"][0]["text"] == "No decisions are waiting."


def test_a_recall_of_megabytes_is_answered_at_once(memrepo: GitRepo) -> None:
    """A 2 MB query is past the wire's line bound (a parse error); 900 KB is past the tool's schema."""
    from gitmem.sessions.mcp_wire import MAX_LINE_BYTES

    started = time.monotonic()
    seen = exchange([tool(1, "recall", {"query": "q " * (MAX_LINE_BYTES + 1)}),
                     tool(2, "recall", {"query": "q " * 450_000}), tool(3, "pending", {})], cwd=memrepo.path,
                    wait_for=(2, 3))
    assert time.monotonic() - started < 20
    errors = [reply["error"] for reply in seen.replies if "error" in reply]
    assert errors == [{"code": -32700, "message": f"Parse error: a line longer than {MAX_LINE_BYTES} bytes"}]
    answers = by_id(seen.replies)
    assert f"query is 900000 characters; the limit is {MAX_TEXT}" in answers[2]["result"]["content"][0]["text"]
    assert answers[3]["result"]["content"][0]["text"] == "No decisions are waiting."
