"""A GitHub API that misbehaves on the wire (hangs up before answering, cuts its answer short, answers a 200
with a page that is not JSON, as a proxy or an outage page does) is a GitHubError naming the call, like a
refused connection: the caller's own handling holds (pull-request mode keeps the commits on their branch;
`gitmem fleet dispatch` records that agent's failure and carries on with the others), never a traceback."""
from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.fleet.dispatch import DISPATCH, carry_out, plan_dispatch
from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.parallel import read_fleet
from gitmem.memory_writer import MemoryWriter
from gitmem.publish.github_api import GitHubClient, GitHubError
from gitmem.workspace import Workspace
from tests.support.fake_actions import FakeActions
from tests.support.gitcli import git


def _hang_up(conn: socket.socket) -> None:
    conn.recv(65536)


def _cut_short(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"state\": ")


def _not_json(conn: socket.socket) -> None:
    conn.recv(65536)
    page = b"<html><body>Unicorn! This page is taking too long to load.</body></html>"
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(page), page))


def _error_body_cut_short(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"m")


@contextmanager
def misbehaving(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback server that answers every connection with `answer`, then closes it; yields its URL."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        server.close()


MISBEHAVIOURS = [_hang_up, _cut_short, _not_json, _error_body_cut_short]


@pytest.mark.parametrize("answer", MISBEHAVIOURS, ids=lambda f: f.__name__.strip("_"))
def test_an_api_that_misbehaves_on_the_wire_is_a_github_error_naming_the_call(answer) -> None:
    with misbehaving(answer) as url:
        client = GitHubClient(url, "owner/agent", "ghs_secrettokenvalue1234")
        for call in (lambda: client.workflow_state("gitmem.yml"), lambda: client.open_pull("gitmem/memory")):
            with pytest.raises(GitHubError) as caught:
                call()
            assert "GitHub API GET /repos/owner/agent" in str(caught.value)
            assert "ghs_secrettokenvalue1234" not in str(caught.value)


def test_the_catch_up_carries_on_past_an_agent_whose_api_calls_hang_up(tmp_path: Path, git_env: None) -> None:
    from tests.support.helpers import make_repo

    template = Path(__file__).resolve().parents[2] / "template-repo" / ".github"
    lines = ["agents:"]
    for name in ("flaky", "fine"):
        agent = make_repo(tmp_path / name)
        shutil.copytree(template, agent.path / ".github", dirs_exist_ok=True)
        MemoryWriter(Workspace.at(agent.path), clock=lambda: datetime.now(UTC) - timedelta(hours=9)).add_log_entry(
            task="keep going", outcome="built", result="done")
        git(agent.path, "add", "-A")
        git(agent.path, "commit", "-qm", "a cycle")
        lines.append(f"  - name: {name}\n    repo: {name}\n    github: owner/{name}")
    (tmp_path / "fleet.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    steps = plan_dispatch(fleet, read_fleet(fleet))
    assert [step.decision for step in steps] == [DISPATCH, DISPATCH]
    with misbehaving(_hang_up) as broken, FakeActions() as fake:
        fake.add("owner/fine")
        carry_out(steps, fleet, lambda repository: GitHubClient(broken if repository == "owner/flaky" else fake.url,
                                                                repository, fake.token))
        assert fake.workflows[("owner/fine", "gitmem.yml")].dispatched == [{"ref": "main",
                                                                           "inputs": {"command": "cycle"}}]
    flaky, fine = steps
    assert "GitHub API GET /repos/owner/flaky/actions/workflows/gitmem.yml" in flaky.error and not flaky.dispatched
    assert fine.dispatched and not fine.error
