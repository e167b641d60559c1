"""The key-adding proxy (gitmem.agents.key_proxy) against a real loopback upstream: each credential slot's
placeholder becomes the real key on the way out, answers stream through as they come (server-sent events
event by event), a request without the placeholder is refused before anything is sent, and nothing is printed."""
from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from gitmem.agents.key_proxy import KeyProxy, ProxyError
from tests.support.loopback import QuietHandler, serving

REAL = "sk-ant-api03-" + "R3alKey" * 6
PLACEHOLDER = "gitmem-placeholder-" + "ab" * 24


class Upstream:
    """A loopback API that records each request (path, headers, body) and streams two SSE events, the second
    only once `release` is set."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()

    @contextmanager
    def serve(self) -> Iterator[str]:
        upstream = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def _body(self) -> bytes:
                if "chunked" in self.headers.get("transfer-encoding", ""):
                    data = b""
                    while size := int(self.rfile.readline().strip() or b"0", 16):
                        data += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                    return data
                return self.rfile.read(int(self.headers.get("content-length", 0)))

            def do_POST(self) -> None:
                body = self._body()
                upstream.seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "body": body})
                if self.path.endswith("/stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for event in (b"data: one\n\n", b"data: two\n\n"):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        upstream.release.wait(10)
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send(200, "application/json", json.dumps({"ok": True, "got": len(body)}).encode())

        with serving(Handler) as url:
            yield url


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, str]]:
    fake = Upstream()
    with fake.serve() as url:
        yield fake, url


@contextmanager
def proxied(url: str) -> Iterator[KeyProxy]:
    proxy = KeyProxy(url + "/base", {PLACEHOLDER: REAL}).start()
    try:
        yield proxy
    finally:
        proxy.close()


def _post(proxy: KeyProxy, path: str, headers: dict[str, str], body: bytes = b'{"q": 1}') -> tuple[int, bytes]:
    host = urllib.parse.urlsplit(proxy.url)
    connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    connection.request("POST", path, body=body, headers=headers)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return answer.status, data


@pytest.mark.parametrize("headers,path", [({"x-api-key": PLACEHOLDER}, "/v1/messages"),
                                          ({"Authorization": f"Bearer {PLACEHOLDER}"}, "/responses"),
                                          ({"x-goog-api-key": PLACEHOLDER}, "/v1beta/models/m:generateContent"),
                                          ({}, f"/v1beta/models/m:generateContent?alt=sse&key={PLACEHOLDER}")],
                         ids=["x-api-key", "bearer", "x-goog-api-key", "query-key"])
def test_the_placeholder_becomes_the_real_key_on_the_way_to_the_upstream(upstream, headers: dict[str, str],
                                                                         path: str) -> None:
    fake, url = upstream
    with proxied(url) as proxy:
        status, data = _post(proxy, path, headers)
    assert status == 200 and json.loads(data) == {"ok": True, "got": 8}
    [seen] = fake.seen
    assert seen["path"].startswith("/base/"), "the upstream's base path is kept"
    sent = json.dumps({**seen, "body": seen["body"].decode()})
    assert REAL in sent and PLACEHOLDER not in sent
    assert seen["headers"]["host"] == urllib.parse.urlsplit(url).netloc


@pytest.mark.parametrize("headers", [{}, {"x-api-key": REAL}, {"x-api-key": PLACEHOLDER[:-1] + "x"},
                                     {"Authorization": "Bearer "}, {"x-other": PLACEHOLDER}],
                         ids=["none", "the-real-key", "near-miss", "empty-bearer", "not-a-credential-header"])
def test_a_request_without_the_placeholder_is_refused_and_never_sent(upstream, headers: dict[str, str],
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    fake, url = upstream
    with proxied(url) as proxy:
        status, data = _post(proxy, "/v1/messages", headers)
        again, _ = _post(proxy, f"/v1/messages?key={REAL}", headers)
    assert status == again == 401 and b"placeholder" in data
    assert fake.seen == []
    out, err = capfd.readouterr()
    assert REAL not in out + err and PLACEHOLDER not in out + err and out + err == ""


def test_a_streamed_answer_reaches_the_client_event_by_event(upstream) -> None:
    """The first event arrives while the upstream still holds the second: nothing waits for the whole body."""
    fake, url = upstream
    with proxied(url) as proxy:
        host = urllib.parse.urlsplit(proxy.url)
        connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
        connection.request("POST", "/stream", body=b"{}", headers={"x-api-key": PLACEHOLDER})
        answer = connection.getresponse()
        assert answer.status == 200 and answer.getheader("content-type") == "text/event-stream"
        first = answer.read1(100)
        assert first == b"data: one\n\n", "the first event came before the upstream sent the second"
        fake.release.set()
        assert answer.read() == b"data: two\n\n"
        connection.close()


def test_a_chunked_request_body_is_streamed_on(upstream) -> None:
    fake, url = upstream
    with proxied(url) as proxy:
        host = urllib.parse.urlsplit(proxy.url)
        connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
        connection.request("POST", "/v1/messages", body=iter([b"ab", b"cde"]), encode_chunked=True,
                           headers={"x-api-key": PLACEHOLDER, "Transfer-Encoding": "chunked"})
        answer = connection.getresponse()
        assert answer.status == 200 and json.loads(answer.read()) == {"ok": True, "got": 5}
        # The same client connection carries a second request (keep-alive), through the same upstream one.
        connection.request("POST", "/v1/messages", body=b"xyz", headers={"x-api-key": PLACEHOLDER})
        assert connection.getresponse().read() == b'{"ok": true, "got": 3}'
        connection.close()
    assert [seen["body"] for seen in fake.seen] == [b"abcde", b"xyz"]


def test_an_unreachable_upstream_is_a_502_naming_the_host_not_the_key(capfd: pytest.CaptureFixture[str]) -> None:
    with serving(QuietHandler) as url:
        dead = url                 # closed when the block ends
    with proxied(dead) as proxy:
        status, data = _post(proxy, "/v1/messages", {"x-api-key": PLACEHOLDER})
    assert status == 502 and b"127.0.0.1" in data and REAL.encode() not in data
    out, err = capfd.readouterr()
    assert out + err == ""


def test_a_malformed_request_is_refused_without_a_word(upstream, capfd: pytest.CaptureFixture[str]) -> None:
    fake, url = upstream
    with proxied(url) as proxy:
        host = urllib.parse.urlsplit(proxy.url)
        connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
        connection.putrequest("POST", f"/v1/messages?key={PLACEHOLDER}")
        connection.putheader("Content-Length", "not-a-number")
        connection.endheaders()
        answer = connection.getresponse()
        assert answer.status == 400 and b"Content-Length" in answer.read()
    assert fake.seen == []
    out, err = capfd.readouterr()
    assert out + err == ""


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com", "http://"])
def test_an_upstream_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(ProxyError):
        KeyProxy(url, {PLACEHOLDER: REAL})


def test_an_upstream_connection_the_upstream_closed_is_not_reused(upstream) -> None:
    """An API closes an idle kept-alive connection: the next request goes on a new one, not to a 502."""
    fake, url = upstream
    closing = Upstream()

    class Closing(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            closing.seen.append({"path": self.path})
            self.send(200, "application/json", b'{"ok": true}')
            self.close_connection = True           # closed after the answer, without saying so

    with serving(Closing) as closing_url, proxied(closing_url) as proxy:
        host = urllib.parse.urlsplit(proxy.url)
        connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
        for _ in range(3):
            connection.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": PLACEHOLDER})
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (200, b'{"ok": true}')
            time.sleep(0.2)
        connection.close()
    assert len(closing.seen) == 3


def test_a_websocket_upgrade_is_refused_with_a_404_and_never_sent(upstream) -> None:
    fake, url = upstream
    with proxied(url) as proxy:
        status, data = _post(proxy, "/responses", {"Authorization": f"Bearer {PLACEHOLDER}", "Connection": "Upgrade",
                                                   "Upgrade": "websocket"})
        keyless, _ = _post(proxy, "/responses", {"Connection": "Upgrade", "Upgrade": "websocket"})
    assert status == keyless == 404 and b"WebSocket" in data and fake.seen == []


def test_a_provider_gets_its_key_only_where_its_api_takes_it(upstream) -> None:
    """An OpenAI route adds the key to `Authorization` only: a placeholder put in `?key=` (which an upstream may
    log or echo in an error) is refused, never turned into the key."""
    fake, url = upstream
    proxy = KeyProxy(url, {PLACEHOLDER: REAL}, ("authorization",)).start()
    try:
        status, _ = _post(proxy, f"/v1/responses?key={PLACEHOLDER}", {})
        allowed, _ = _post(proxy, "/v1/responses", {"Authorization": f"Bearer {PLACEHOLDER}"})
    finally:
        proxy.close()
    assert status == 401 and allowed == 200
    assert [seen["path"] for seen in fake.seen] == ["/v1/responses"]


def test_a_connection_kept_open_adds_no_key_once_the_proxy_is_closed(upstream) -> None:
    fake, url = upstream
    proxy = KeyProxy(url, {PLACEHOLDER: REAL}).start()
    host = urllib.parse.urlsplit(proxy.url)
    connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    connection.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": PLACEHOLDER})
    first = connection.getresponse()
    first.read()
    proxy.close()                                  # the cycle ended; the agent kept its connection
    connection.request("POST", "/v1/messages", body=b"{}", headers={"x-api-key": PLACEHOLDER})
    second = connection.getresponse()
    second.read()
    connection.close()
    assert first.status == 200 and second.status == 401
    assert len(fake.seen) == 1


def test_an_endpoint_with_a_bad_port_is_a_proxy_error() -> None:
    with pytest.raises(ProxyError, match="no valid port"):
        KeyProxy("https://api.example:notaport", {PLACEHOLDER: REAL})


# One process: a loopback upstream that reads and drops a chunked body, the proxy in front of it, and a client
# that sends one chunk of SIZE bytes; it prints the process's peak memory in MiB.
ONE_BIG_CHUNK = """
import http.server, socket, threading
from gitmem.agents.key_proxy import KeyProxy

class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        total = 0
        while True:
            size = int(self.rfile.readline().split(b";")[0] or b"0", 16)
            if size == 0:
                self.rfile.readline()
                break
            while size:
                got = len(self.rfile.read(min(1 << 16, size)))
                size -= got
                total += got
            self.rfile.readline()
        body = str(total).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

SIZE = 256 << 20
upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
threading.Thread(target=upstream.serve_forever, daemon=True).start()
proxy = KeyProxy(f"http://127.0.0.1:{upstream.server_address[1]}", {"ph": "real"}).start()
client = socket.create_connection(("127.0.0.1", int(proxy.url.rsplit(":", 1)[1])))
client.sendall(b"POST /v1/messages HTTP/1.1\\r\\nHost: x\\r\\nx-api-key: ph\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n"
               + b"%x\\r\\n" % SIZE)
block = b"a" * (1 << 20)
for _ in range(SIZE >> 20):
    client.sendall(block)
client.sendall(b"\\r\\n0\\r\\n\\r\\n")
answer = b""
while not answer.endswith(str(SIZE).encode()):
    answer += client.recv(4096)
# This process's own peak (VmHWM), not ru_maxrss: that counts the image it was forked from before the exec, the
# test runner's, which in a whole suite is larger than the limit on its own.
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) // 1024)
"""


def test_a_huge_chunk_in_a_request_body_is_streamed_on_in_bounded_pieces() -> None:
    """The agent writes the request: one chunk of a chunked body claiming gigabytes was read whole into the
    runner's memory (and copied once more to send it on), so a boxed agent could run the runner out of memory
    at loopback speed. A 256 MiB chunk now passes with the runner's memory where it was."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", ONE_BIG_CHUNK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 128, f"peak {done.stdout.strip()} MiB for a 256 MiB chunk"


class EgressProxy:
    """A loopback forward proxy that takes CONNECT, as a corporate network's only way out: it records each
    tunnel (target and Proxy-Authorization) and relays bytes both ways."""

    def __init__(self) -> None:
        self.tunnels: list[tuple[str, str]] = []

    @contextmanager
    def serve(self) -> Iterator[str]:
        import select
        import socket

        egress = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_CONNECT(self) -> None:
                egress.tunnels.append((self.path, self.headers.get("Proxy-Authorization", "")))
                host, _, port = self.path.rpartition(":")
                far = socket.create_connection((host, int(port)), timeout=10)
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                ends = [self.connection, far]
                while True:
                    ready, _, _ = select.select(ends, [], [], 10)
                    if not ready:
                        break
                    for end in ready:
                        data = end.recv(65536)
                        if not data:
                            far.close()
                            return
                        (far if end is self.connection else self.connection).sendall(data)

        with serving(Handler) as url:
            yield url


def test_the_upstream_is_reached_through_the_egress_proxy_the_runner_is_given(
        upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind a network whose only way out is a forward proxy (HTTPS_PROXY, HTTP_PROXY, as corporate
    networks and their CI runners have), the runner's key proxy connected to the model's host directly, and every
    request of a stood-in key was a 502: the agent CLI talks to the runner on loopback, so only the runner can
    take the way out. It goes through the proxy the runner's environment names, with its credentials, and
    straight where NO_PROXY says."""
    fake, url = upstream
    egress = EgressProxy()
    with egress.serve() as proxy_url:
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
                     "all_proxy", "ALL_PROXY"):
            monkeypatch.delenv(name, raising=False)
        # the upstream here is http, whose way out is HTTP_PROXY (HTTPS_PROXY is an https upstream's)
        monkeypatch.setenv("http_proxy", proxy_url.replace("http://", "http://corp%40user:pa%3Ass@"))
        with proxied(url) as proxy:
            status, _ = _post(proxy, "/v1/messages", {"x-api-key": PLACEHOLDER})
        assert status == 200
        assert fake.seen and fake.seen[-1]["headers"]["x-api-key"] == REAL
        host = urllib.parse.urlsplit(url)
        assert egress.tunnels == [(f"{host.hostname}:{host.port}",
                                   "Basic " + base64.b64encode(b"corp@user:pa:ss").decode())], egress.tunnels
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with proxied(url) as proxy:
            assert _post(proxy, "/v1/messages", {"x-api-key": PLACEHOLDER})[0] == 200
        assert len(egress.tunnels) == 1, "NO_PROXY: straight to the upstream"


def test_an_agent_given_a_forward_proxy_is_told_to_reach_the_loopback_endpoint_directly() -> None:
    """An agent CLI that honours HTTP_PROXY (agent.pass_env passes it, or no box) would send its requests for
    the runner's loopback endpoint to that proxy, which cannot reach it: NO_PROXY gets 127.0.0.1, in the box
    too, and an agent with no proxy gets no NO_PROXY."""
    from gitmem.agents import key_stand_in, sandbox

    env = {"ANTHROPIC_API_KEY": REAL, "HTTP_PROXY": "http://proxy.corp.invalid:3128", "no_proxy": "corp.invalid",
           "PATH": "/usr/bin"}
    with key_stand_in.serving(["claude", "-p"], env) as stand_in:
        assert stand_in.env["NO_PROXY"] == stand_in.env["no_proxy"] == "corp.invalid,127.0.0.1"
        assert stand_in.env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
        boxed = sandbox.confined_environment(stand_in.env, sandbox.Mounts(), keep=("HTTP_PROXY",))
        assert boxed["NO_PROXY"] == "corp.invalid,127.0.0.1" and boxed["HTTP_PROXY"] == env["HTTP_PROXY"]
    with key_stand_in.serving(["claude", "-p"], {"ANTHROPIC_API_KEY": REAL}) as stand_in:
        assert "NO_PROXY" not in stand_in.env
