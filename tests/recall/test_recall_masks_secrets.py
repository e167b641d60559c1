"""Recall masks secrets as the report does: an environment secret's value that history already holds is never
shown by `gitmem recall` (text and --json), the MCP recall tool, or the plain-text fallback."""
from __future__ import annotations

import json

import pytest

from gitmem.agents.tools import plain_recall
from gitmem.config import load_config
from gitmem.errors import ExitCode
from gitmem.secrets import MASK
from tests.support.helpers import GitRepo
from tests.support.mcp_client import call, converse
from tests.support.recall_support import History

SECRET = "hx7Qv2mZpL9rT4wYk8Nc"          # no known token shape: only the environment says it is a secret
TOKEN = "ghp_" + "A1b2C3d4" * 5            # a token shape: masked by pattern, whatever the environment holds


@pytest.fixture
def history(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> History:
    history = History(memrepo)
    history.cycle(task="rotate the heron deploy credentials", result=f"the heron deploy now logs in with {SECRET}")
    history.cycle(task="tidy the heron dashboards", result="moved the latency graphs to the front")
    # Written before the check knew it (hand-edited, committed without the hook): history keeps it.
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md").replace(
        "- Task: rotate the heron deploy credentials", f"- Task: rotate the heron deploy credentials ({TOKEN})")},
        "an old commit")
    # The variable is set now: the value was a secret all along, and recall must treat it as one.
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    return history


def test_recall_text_and_json_mask_an_environment_secret_in_history(history: History, cli) -> None:
    assert SECRET in history.repo.read("LOG.md"), "history holds it: recall must not repeat it"
    text = cli(["recall", "heron", "deploy", "credentials"], cwd=history.root)
    assert text.code == ExitCode.OK, text.err
    assert SECRET not in text.out and TOKEN not in text.out and MASK in text.out
    assert "heron" in text.out, "the hit is still shown, masked"
    data = cli(["recall", "heron", "deploy", "--json", "--all"], cwd=history.root)
    hits = json.loads(data.out)["hits"]
    assert hits and SECRET not in data.out and TOKEN not in data.out
    assert any(MASK in hit["snippet"] for hit in hits)
    # An entry without a secret keeps its highlights.
    other = cli(["recall", "dashboards", "latency"], cwd=history.root)
    assert "**dashboards**" in other.out


def test_a_query_naming_the_secret_does_not_get_it_back_split_by_highlights(history: History, cli) -> None:
    half = SECRET[:10]
    for query in ([SECRET], [half, "deploy"], [SECRET, "heron"]):
        result = cli(["recall", *query, "--all"], cwd=history.root)
        assert result.code == ExitCode.OK, result.err
        assert SECRET not in result.out.replace("**", ""), query


def test_the_mcp_recall_tool_masks_it(history: History) -> None:
    seen = converse([call("recall", {"query": "heron deploy credentials"})], cwd=history.root,
                    env={"DEPLOY_TOKEN": SECRET})
    (answer,) = seen.answers
    assert not answer.is_error and "heron" in answer.text
    assert SECRET not in answer.text and TOKEN not in answer.text and MASK in answer.text


def test_the_plain_text_fallback_masks_it(history: History) -> None:
    shown = plain_recall(history.root, load_config(history.root), "heron deploy", 10)
    assert "heron" in shown and SECRET not in shown and TOKEN not in shown and MASK in shown
