"""GitHub Copilot CLI's own model provider (COPILOT_PROVIDER_*: `copilot help environment`) behind the runner's key
proxy: the agent holds a placeholder in COPILOT_PROVIDER_API_KEY and COPILOT_PROVIDER_BASE_URL points at the
loopback endpoint, whose upstream is the provider the human chose. The real CLI's cycle through it is
tests/e2e/test_copilot_cli.py."""
from __future__ import annotations

import json

from gitmem.agents import key_stand_in

KEY = "sk-copilot-provider-" + "k" * 32


def test_copilots_provider_key_gets_a_placeholder_and_its_base_url_the_proxy() -> None:
    env = {"COPILOT_PROVIDER_API_KEY": KEY, "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1", "PATH": "/usr/bin"}
    argv = ["copilot", "--trust-folder", "--allow-all-tools"]
    chosen = key_stand_in.plan_keys(argv, env, environ={})
    assert [(r.provider.name, r.variables, r.upstream) for r in chosen.routes] == [
        ("Copilot provider", ("COPILOT_PROVIDER_API_KEY",), "http://127.0.0.1:9/v1")]
    assert chosen.held == ()
    assert "placeholder for COPILOT_PROVIDER_API_KEY" in key_stand_in.describe_keys(chosen)
    with key_stand_in.serving(argv, env) as stand_in:
        assert stand_in.env["COPILOT_PROVIDER_BASE_URL"].startswith("http://127.0.0.1:")
        assert stand_in.env["COPILOT_PROVIDER_BASE_URL"] != env["COPILOT_PROVIDER_BASE_URL"]
        assert stand_in.env["COPILOT_PROVIDER_API_KEY"].startswith(key_stand_in.PLACEHOLDER_PREFIX)
        assert KEY not in json.dumps(stand_in.env) and stand_in.argv == argv


def test_a_copilot_bearer_token_goes_the_same_way() -> None:
    chosen = key_stand_in.plan_keys(["copilot"], {"COPILOT_PROVIDER_BEARER_TOKEN": KEY}, environ={})
    assert [(r.variables, r.upstream) for r in chosen.routes] == [(("COPILOT_PROVIDER_BEARER_TOKEN",),
                                                                   "https://api.openai.com/v1")]
