"""The close's model path through the real anthropic SDK, against a fake Messages API on 127.0.0.1.

The model words rules, flags contradictions and writes the prose; the gates stay in code, a contradiction
without a Supersedes line becomes a Pending decision, and an API failure falls back to the offline close.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gitmem.memory import decisions, lessons, now, rules
from tests.support.fake_anthropic import messages_api
from tests.support.helpers import GitRepo
from tests.support.world import World, at, d, last_entry

KEY = "test-key-not-a-secret"
LONG_RULE = ("When a deploy touches the database, run the migration against a copy of production first, then "
             "deploy, then verify the row counts, and only then announce it")


class FakeAPI:
    """A minimal Messages API: answers from `reply(system, payload)`, or fails with `status`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.reply: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda system, payload: {}

    def handle(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        self.headers.append(headers)
        if self.status != 200:
            return self.status, {"type": "error", "error": {"type": "api_error", "message": "boom"}}
        system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
        answer = self.reply(system, json.loads(body["messages"][0]["content"]))
        return 200, {"id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
                     "model": body["model"], "stop_reason": "end_turn", "stop_sequence": None,
                     "content": [{"type": "text", "text": "Here you go:\n" + json.dumps(answer)}],
                     "usage": {"input_tokens": 120, "output_tokens": 30}}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    fake = FakeAPI()
    with messages_api(fake.handle) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        yield fake


@pytest.fixture
def world(memrepo: GitRepo) -> World:
    world = World(memrepo)
    text = world.read("RULES.md").replace("## Retired", "- R-01 · Deploy on Fridays. (human)\n\n## Retired")
    world.git.commit_files({"RULES.md": text}, "a human rule")
    world.cycle(at(10, 8))                                                             # cycle 1
    world.lesson(at(10, 8, 10), "Migrations need a dry run", rule=LONG_RULE)          # L-0001: too long offline
    world.lesson(at(10, 8, 20), "Weekend deploys", rule="Deploy only Monday to Thursday.")   # L-0002
    for hour in (9, 10):                                                               # cycles 2, 3
        world.cycle(at(10, hour))
        world.confirm(at(10, hour, 10), "L-0001")
        world.confirm(at(10, hour, 20), "L-0002")
    return world


def answer(system: str, payload: dict[str, Any]) -> dict[str, Any]:
    if "proven rules" in system:
        return {"rules": {"L-0001": "Dry-run every migration on a production copy before deploying it.",
                          "L-0002": "Deploy only from Monday to Thursday."},
                "conflicts": [{"lesson": "L-0002", "rule": "R-01", "why": "R-01 says deploy on Fridays"}]}
    assert payload["cycles"] == "3 cycles (3 built, 0 published, 0 no-build)"
    return {"summary": "Three cycles built; one rule learned, one conflict sent to the human.",
            "plan_task": "Write the migration dry-run script", "plan_why": "the new rule needs a tool"}


def test_model_words_rules_files_contradictions_and_writes_prose(world: World, api: FakeAPI) -> None:
    api.reply = answer
    before = world.git.head()
    result = world.close(d(10), at(10, 23), use_llm=True)
    # Two calls: rules (wording + contradictions), then prose; both to close.model with the key header.
    assert [r["model"] for r in api.requests] == [world.config.close.model] * 2
    # SDK 2.x sends the key as a bearer token; older ones used x-api-key.
    assert all(KEY in h.get("authorization", "") + h.get("x-api-key", "") for h in api.headers)
    sent = api.requests[0]["messages"][0]["content"]
    assert "L-0001" in sent and "R-01" in sent
    doc = rules.parse(world.read("RULES.md"))
    assert [r.render() for r in doc.proven] == [
        "- R-01 · Deploy on Fridays. (human)",
        "- R-02 · Dry-run every migration on a production copy before deploying it. (from L-0001; cycles 2, 3)"]
    pending = decisions.parse(world.read("DECISIONS.md")).pending
    assert [(p.id, p.title) for p in pending] == [("D-0001", "Rule conflict: L-0002 vs R-01")]
    assert "R-01 says deploy on Fridays" in (pending[0].get("Context") or "")
    assert result.decisions_filed == ["D-0001"]
    assert lessons.parse(world.read("LESSONS.md")).find("L-0002").status == "open"  # type: ignore[union-attr]
    entry = last_entry(world.read("LOG.md"))
    assert entry.get("Summary") == "Three cycles built; one rule learned, one conflict sent to the human."
    assert entry.get("Plan") == "Write the migration dry-run script — why: the new rule needs a tool"
    top = now.parse(world.read("NOW.md"), max_blocks=1).top
    assert top is not None and top.plan_for == d(11)
    assert result.llm == f"{world.config.close.model}: 2 call(s), 240 input / 60 output tokens"
    assert "L-0002 · Weekend deploys: eligible, but contradicts R-01; filed D-0001 for the human" in (
        entry.get("Promotions") or "")
    for rel in ("LOG.md", "NOW.md", "RULES.md", "LESSONS.md", "DECISIONS.md"):
        assert KEY not in world.read(rel)
    world.assert_valid(before)
    # The next day the conflict is still open: the close points at the same decision, it files no second one.
    world.cycle(at(11, 9))
    api.reply = lambda system, payload: (answer(system, payload) if "proven rules" in system else
                                         {"summary": "One cycle.", "plan_task": "Wait", "plan_why": "D-0001"})
    again = world.close(d(11), at(11, 23), use_llm=True)
    assert again.decisions_filed == []
    assert "L-0002 · Weekend deploys: eligible, but contradicts R-01; D-0001 already asks the human" in (
        again.not_promoted)
    assert len(decisions.parse(world.read("DECISIONS.md")).pending) == 1


def test_api_failure_falls_back_to_the_offline_close(world: World, api: FakeAPI) -> None:
    import anthropic

    api.status = 500
    client = anthropic.Anthropic(max_retries=0)      # base URL and key from the environment set by `api`
    result = world.close(d(10), at(10, 23), use_llm=True, client=client)
    assert len(api.requests) == 2                    # tried both calls, once each
    assert result.llm is not None and "fell back offline after InternalServerError 500" in result.llm
    assert KEY not in result.llm
    # Offline: L-0002's Rule: line is promoted as written (no contradiction check answered); L-0001's is too long.
    assert [r.text for r in rules.parse(world.read("RULES.md")).proven] == ["Deploy on Fridays.",
                                                                           "Deploy only Monday to Thursday."]
    assert any(n.startswith("L-0001 · Migrations need a dry run: eligible, but its rule line is")
               for n in result.not_promoted)
    assert last_entry(world.read("LOG.md")).get("Summary") is None


def test_the_model_never_decides_eligibility(world: World, api: FakeAPI) -> None:
    """A lesson the model names that is not eligible is ignored; only gated lessons are sent at all."""
    world.lesson(at(10, 11), "Not confirmed", rule="An unconfirmed rule.")                   # L-0003

    def eager(system: str, payload: dict[str, Any]) -> dict[str, Any]:
        if "proven rules" in system:
            assert [item["id"] for item in payload["lessons"]] == ["L-0001", "L-0002"]
            return {"rules": {"L-0003": "Promote me anyway.", "L-0001": "Dry-run migrations first.",
                              "L-0002": "x" * 121},                  # too long: the lesson's Rule: line stays
                    "conflicts": [{"lesson": "L-0003", "rule": "R-01", "why": "not a candidate"}]}
        return {"summary": "ok", "plan_task": "next", "plan_why": "because"}

    api.reply = eager
    result = world.close(d(10), at(10, 23), use_llm=True)
    assert [(p["lesson"], p["text"]) for p in result.promoted] == [
        ("L-0001", "Dry-run migrations first."), ("L-0002", "Deploy only Monday to Thursday.")]
    assert "Promote me anyway." not in world.read("RULES.md")
    assert result.decisions_filed == []


def test_the_model_is_sent_no_secret_of_the_day(world: World, api: FakeAPI) -> None:
    """The facts the model words quote the day's entries: a token that reached LOG past the hooks is masked
    before it leaves the machine, as in the entry the close writes (gitmem.secrets.scrub)."""
    token = "ghp_" + "A1b2C3d4" * 5
    entry = f"\n## 2026-11-10 11:00 UTC · cycle 4 · no-build\n- Task: deploy\n- Result: key {token}\n"
    world.git.commit_files({"LOG.md": world.read("LOG.md") + entry}, "gitmem: cycle 4 (past the hooks)")
    api.reply = lambda system, payload: ({"rules": {}, "conflicts": []} if "proven rules" in system else
                                         {"summary": "Four cycles.", "plan_task": "Rotate the key", "plan_why": "-"})
    world.close(d(10), at(10, 23), use_llm=True)
    sent = json.dumps(api.requests)
    assert len(api.requests) == 2 and "key ***" in sent and token not in sent
