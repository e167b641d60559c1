""""Is this author the agent" is decided once (gitmem.checks.rule_inputs.authorship) for every rule that binds only the
agent. GM207 (an answer by the agent) recognised the agent's email also as git records it (` agent@x` commits
as `agent@x`), while GM923 (an agent commit writing two workspaces' memory) compared the raw text only, so
the same commit was the agent's to one rule and a human's to the other. GM207's reading won: from rules 5,
GM923 reports such a commit too (variant `normalised`), and history written under rules 4 still verifies."""
from __future__ import annotations

from dataclasses import replace

import pytest

from gitmem.checks import CheckInput, cross_workspace
from gitmem.checks.check_and_verify import last_checked
from gitmem.checks.rule_inputs import Authorship, authorship
from gitmem.config import Config
from gitmem.errors import ExitCode
from gitmem.gitio.snapshots import Snapshot
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.hostile.test_hostile_workspaces import two  # noqa: F401  (the fixture: a second workspace, w2)
from tests.support.helpers import AGENT, HUMAN, GitRepo

TRIMMED = [" agent@gitmem.invalid", "agent@gitmem.invalid ", "\tagent@gitmem.invalid", "<agent@gitmem.invalid>",
           "agent@gitmem.invalid.", "'agent@gitmem.invalid'", " AGENT@Gitmem.Invalid"]


def _log_in_both(repo: GitRepo) -> None:
    """Stage one LOG entry in the default workspace and one in w2: a cycle never writes both."""
    MemoryWriter(repo.ws()).add_log_entry(task="a task", outcome="built", result="done")
    MemoryWriter(Workspace.at(repo.path, workspace="w2")).add_log_entry(task="w2 task", outcome="built", result="r")
    repo.stage("LOG.md", "w2/LOG.md")


def _codes(lines: list[str]) -> set[tuple[str, str]]:
    return {(line.split(": ")[0], line.split(": ")[1].split()[0]) for line in lines if ": GM" in line}


@pytest.mark.parametrize("email", TRIMMED)
def test_an_agent_email_git_trims_is_the_agent_to_gm923_as_to_gm207(two: GitRepo, cli,  # noqa: F811
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    email: str) -> None:
    """Failed before: GM923 took ` agent@gitmem.invalid` for a human and let the commit write two workspaces."""
    _log_in_both(two)
    monkeypatch.setenv("GIT_AUTHOR_NAME", AGENT[0])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", email)
    result = cli(["check"], cwd=two.path)
    assert result.code == ExitCode.VIOLATIONS, result.out + result.err
    assert {("LOG.md:1", "GM923"), ("w2/LOG.md:1", "GM923")} <= _codes(result.lines), result.out
    assert "its email written with characters git trims" in result.out or email.strip().lower() == AGENT[1]


def test_the_agent_exactly_and_a_human_are_judged_as_before(two: GitRepo, cli,  # noqa: F811
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _log_in_both(two)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", AGENT[1].upper())
    agent = cli(["check"], cwd=two.path)
    assert agent.code == ExitCode.VIOLATIONS and ("LOG.md:1", "GM923") in _codes(agent.lines)
    assert "characters git trims" not in agent.out
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    assert cli(["check"], cwd=two.path).code == ExitCode.OK


def test_verify_reads_a_trimmed_agent_commit_as_the_agents(two: GitRepo, cli) -> None:  # noqa: F811
    """libgit2 keeps a trailing dot that git's own commit would trim, so such an author can be in history."""
    start = two.head()
    _log_in_both(two)
    two.commit("gitmem: cycle 1 · built · a task\n\nGitmem-Rules: 5\n", author=(AGENT[0], f"{AGENT[1]}."))
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=two.path)
    assert result.code == ExitCode.VIOLATIONS and ("w2/LOG.md:1", "GM923") in _codes(result.lines), result.out


def test_the_stricter_reading_is_rules_5_so_older_history_still_verifies(two: GitRepo) -> None:  # noqa: F811
    """A commit that rules 4 let through is not turned into a failure: the variant is of generation 5."""
    config = Workspace.at(two.path).config
    old = Snapshot.from_dict("old", {"LOG.md": b"", "w2/LOG.md": b""})
    new = Snapshot.from_dict("new", {"LOG.md": b"x\n", "w2/LOG.md": b"y\n"})
    for author, generation in ((AGENT[1], 3), (f"{AGENT[1]}.", 5)):
        found = cross_workspace.check(CheckInput(config, old, new, author_email=author))
        assert sorted(v.path for v in found) == ["LOG.md", "w2/LOG.md"], author
        assert {v.generation for v in found} == {generation}, author
    assert cross_workspace.check(CheckInput(config, old, new, author_email="ada@example.com")) == []


def _judged(author: str | None, old_email: str | None = None) -> Authorship:
    config = Config()
    old = replace(config, agent=replace(config.agent, email=old_email)) if old_email else None
    return authorship(CheckInput(config, None, Snapshot.from_dict("new", {}), author_email=author, old_config=old))


def test_one_function_says_who_made_a_change() -> None:
    assert _judged(AGENT[1]) is Authorship.AGENT and _judged(AGENT[1].upper()) is Authorship.AGENT
    for email in TRIMMED[:-1]:
        assert _judged(email) is Authorship.AGENT_AS_GIT_RECORDS, email
        assert _judged(email).variant == "normalised" and _judged(email).is_agent
    assert _judged("ada@example.com") is Authorship.HUMAN and not _judged(None).is_agent
    assert _judged("agent@gitmem.invalid.org") is Authorship.HUMAN    # only git's trimmed ends, not more
    # A commit that changes agent.email is still judged by the old one, trimmed or not.
    assert _judged("old-agent@example.org", old_email="old-agent@example.org") is Authorship.AGENT
    assert _judged(" old-agent@example.org", old_email="old-agent@example.org") is Authorship.AGENT_AS_GIT_RECORDS


@pytest.mark.parametrize("email", [AGENT[1].upper(), f" {AGENT[1]}"])
def test_the_last_checked_commit_is_found_by_the_one_authorship_rule(memrepo: GitRepo, email: str) -> None:
    """Failed before: `gitio.last_phase_commit` compared the author's email exactly, so a cycle's commit whose
    address differs from agent.email only in case (or as git trims it) was not the agent's, and the next cycle
    re-judged every memory file whole. The checks' rule (`authorship_of`) won; a human's commit with the same
    trailer is still not a checked one."""
    memrepo.write("notes.txt", "one\n")
    memrepo.stage("notes.txt")
    phase = str(memrepo.commit("gitmem: cycle 1 · built · x\n\nGitmem-Cycle: 1\nGitmem-Phase: cycle\n",
                               author=(AGENT[0], email)))
    assert last_checked(memrepo.ws()) == phase
    memrepo.write("notes.txt", "two\n")
    memrepo.stage("notes.txt")
    memrepo.commit("gitmem: cycle 2 · built · y\n\nGitmem-Cycle: 2\nGitmem-Phase: cycle\n", author=HUMAN)
    assert last_checked(memrepo.ws()) == phase
