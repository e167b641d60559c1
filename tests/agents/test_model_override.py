"""`gitmem cycle --model` (used by the Action's `model` input) reaches the Messages API request."""
from __future__ import annotations

import pytest

from tests.support.fake_anthropic import messages_api

KEY = "test-key-not-a-secret"


@pytest.fixture
def seen_models(monkeypatch: pytest.MonkeyPatch):
    models: list[str] = []

    def respond(body, headers):
        models.append(body["model"])
        return 200, {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "content": [{"type": "text", "text": "Nothing to do."}],
                     "usage": {"input_tokens": 10, "output_tokens": 3}}

    with messages_api(respond) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        yield models


def test_model_option_overrides_config_for_one_cycle(memrepo, cli, seen_models):
    result = cli(["cycle", "--agent", "anthropic", "--model", "claude-override-test"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert seen_models and set(seen_models) == {"claude-override-test"}
    assert "no-build" in result.out            # the model logged nothing, so Rule 0 wrote the entry
    assert "claude-override-test" not in memrepo.read("gitmem.yaml")
