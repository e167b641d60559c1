"""`gitmem cycle --model` (used by the Action's `model` input) reaches the Messages API request."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

KEY = "test-key-not-a-secret"


@pytest.fixture
def seen_models(monkeypatch: pytest.MonkeyPatch):
    models: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            models.append(body["model"])
            raw = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                              "stop_reason": "end_turn", "stop_sequence": None,
                              "content": [{"type": "text", "text": "Nothing to do."}],
                              "usage": {"input_tokens": 10, "output_tokens": 3}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    yield models
    server.shutdown()
    server.server_close()


def test_model_option_overrides_config_for_one_cycle(memrepo, cli, seen_models):
    result = cli(["cycle", "--agent", "anthropic", "--model", "claude-override-test"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert seen_models and set(seen_models) == {"claude-override-test"}
    assert "no-build" in result.out            # the model logged nothing, so Rule 0 wrote the entry
    assert "claude-override-test" not in memrepo.read("gitmem.yaml")
