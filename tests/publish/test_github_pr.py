"""Pull-request mode's REST calls against a fake GitHub API on loopback."""
from __future__ import annotations

import pytest

from gitmem.publish.github_api import GitHubClient, GitHubError
from tests.support.fake_github import FakeGitHub


def test_first_run_opens_a_pull_request_and_the_second_updates_it():
    with FakeGitHub() as fake:
        client = GitHubClient(fake.url, fake.repository, fake.token)
        first = client.open_or_update(head="gitmem/memory", base="main", title="cycle 1", body="one")
        second = client.open_or_update(head="gitmem/memory", base="main", title="cycle 2", body="two")
    assert first.created and not second.created
    assert first.number == second.number == 1
    assert len(fake.pulls) == 1
    assert fake.pulls[0]["title"] == "cycle 2" and fake.pulls[0]["body"] == "two"
    assert [m for m, _, _ in fake.requests] == ["GET", "POST", "GET", "PATCH"]


def test_a_closed_pull_request_is_not_reused():
    with FakeGitHub() as fake:
        client = GitHubClient(fake.url, fake.repository, fake.token)
        client.open_or_update(head="gitmem/memory", base="main", title="t", body="b")
        fake.pulls[0]["state"] = "closed"
        again = client.open_or_update(head="gitmem/memory", base="main", title="t2", body="b2")
    assert again.created and again.number == 2


def test_errors_name_the_call_and_never_the_token():
    with FakeGitHub(token="the-right-token") as fake:
        client = GitHubClient(fake.url, fake.repository, "ghs_wrongtokenvalue")
        with pytest.raises(GitHubError) as caught:
            client.open_or_update(head="b", base="main", title="t", body="b")
    assert "HTTP 401" in str(caught.value)
    assert "ghs_wrongtokenvalue" not in str(caught.value)
