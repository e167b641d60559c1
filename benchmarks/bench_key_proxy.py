"""The key proxy's cost per model request (gitmem.agents.key_stand_in): a loopback fake of the Messages API called
directly against the same call through the runner's `KeyProxy`, one keep-alive client connection each, as an agent
CLI keeps one. Two bodies: a small JSON answer, and a streamed answer of server-sent events (64 events, about
40 KB), whose last byte is what the CLI waits for. Interleaved rounds, so drifting load hits both sides alike;
the figures are the medians of the per-round ratios and the added milliseconds per request.

Run it: `.venv/bin/pytest benchmarks/bench_key_proxy.py --benchmark-only -s`.
"""
from __future__ import annotations

import http.client
import statistics
import time
import urllib.parse
from collections.abc import Callable

import pytest

from gitmem.agents.key_proxy import KeyProxy
from tests.support.loopback import QuietHandler, serving

ROUNDS = 30
REQUESTS = 50               # per round and side
KEY, PLACEHOLDER = "sk-ant-api03-" + "b" * 40, "gitmem-placeholder-" + "c" * 48
EVENT = b"event: content_block_delta\ndata: " + b'{"type": "content_block_delta", "text": "' + b"x" * 560 + b'"}\n\n'
BODY = b'{"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "' + b"hi " * 600 + b'"}]}'


class Fake(QuietHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True      # as a real API's server: no 40 ms delayed-ACK stall on either side

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.headers.get("x-api-key") != KEY:
            self.send(401, "application/json", b"{}")
            return
        if self.path.endswith("/stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for _ in range(64):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(EVENT), EVENT))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send(200, "application/json", b'{"id": "msg", "content": [{"type": "text", "text": "ok"}]}')


def _client(url: str, key: str, path: str) -> Callable[[], float]:
    """Seconds for REQUESTS requests on one kept-alive connection, each read to its last byte."""
    parts = urllib.parse.urlsplit(url)

    def run() -> float:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        started = time.perf_counter()
        for _ in range(REQUESTS):
            connection.request("POST", path, body=BODY, headers={"x-api-key": key, "content-type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            assert answer.status == 200
        seconds = time.perf_counter() - started
        connection.close()
        return seconds
    return run


def overhead(path: str, rounds: int) -> dict[str, float]:
    with serving(Fake) as url:
        proxy = KeyProxy(url, {PLACEHOLDER: KEY}).start()
        try:
            direct, through = _client(url, KEY, path), _client(proxy.url, PLACEHOLDER, path)
            ratios, added = [], []
            for index in range(rounds + 1):          # the first round warms up and is dropped
                plain, proxied = direct(), through()
                if index:
                    ratios.append(proxied / plain)
                    added.append((proxied - plain) / REQUESTS * 1000)
        finally:
            proxy.close()
    return {"ratio_median": statistics.median(ratios), "added_ms_per_request_median": statistics.median(added),
            "rounds": rounds, "requests_per_round": REQUESTS}


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/stream"], ids=["json", "sse-40KB"])
@pytest.mark.benchmark(group="key proxy: through the proxy / direct, loopback fake, keep-alive")
def test_the_key_proxys_overhead_per_request(benchmark, path: str) -> None:
    """Reported, not asserted (timings depend on the machine): see `extra_info`. A real API answers in hundreds
    of milliseconds to minutes; the proxy adds the figure printed here to each request."""
    rounds = 2 if benchmark.disabled else ROUNDS
    result = benchmark.pedantic(overhead, args=(path, rounds), rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(f"\nkey proxy, {path}: through/direct median ratio {result['ratio_median']:.2f}, "
          f"+{result['added_ms_per_request_median']:.3f} ms per request ({rounds} rounds of {REQUESTS})")
    assert result["ratio_median"] > 0
