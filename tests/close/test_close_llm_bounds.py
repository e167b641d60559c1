"""The model's words are untrusted text, like the agent's (its input quotes what the agent wrote): the close takes
its summary and plan on one line each and within the close entry's shares, and the plan block it puts on top of
NOW, which every later cycle reads, within the same share. A model that answers with pages is cut, marked `…`."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from gitmem.memory import now
from tests.support.fake_anthropic import messages_api
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry

HUGE = "word " * 6000


@pytest.fixture
def model_of_pages(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def handle(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
        answer = {"rules": {}, "conflicts": []} if "proven rules" in system else {
            "summary": HUGE, "plan_task": "Ship " + HUGE, "plan_why": "because " + HUGE}
        return 200, {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "content": [{"type": "text", "text": json.dumps(answer)}],
                     "usage": {"input_tokens": 10, "output_tokens": 10}}
    with messages_api(handle) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-a-secret")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        yield


def test_a_model_answering_with_pages_is_cut_in_the_report_and_in_nows_plan(memrepo: GitRepo,
                                                                             model_of_pages: None) -> None:
    world = World(memrepo)
    world.cycle(at(10, 9))
    before = world.git.head()
    result = world.close(d(10), at(10, 23), use_llm=True)
    assert result.status == "closed"
    entry = last_entry(world.read("LOG.md"))
    plan = entry.get("Plan") or ""
    assert plan.startswith("Ship word word") and plan.endswith("…") and len(plan) < 3000
    assert len(entry.get("Summary") or "") < 3000
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.plan_for == d(11)
    assert top.get("Next") == plan, "NOW's plan is the plan the report states"
    world.assert_valid(before)
