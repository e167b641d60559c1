"""Which workspace owns a memory file is decided once (gitmem.config.ownership), and the runner, GM923 and recall
all read that answer.

The repository here holds the default workspace and two team workspaces, `a` and `b`, that keep their memory in
one folder, `team/`: each has its own NOW, DECISIONS, LOG and LESSONS, and both use `team/RULES.md` and
`team/ROADMAP.md`. Those two files are shared: each sharer's own, and no other workspace's. Before, three copies
gave three answers for them: the runner took them for `a`'s and `b`'s (and foreign to the default workspace),
GM923 for nobody's, so the default agent writing them beside its own LOG passed; recall filed them under `a`,
the first workspace naming them, so `b`'s recall never found its own rules.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.codes import RULES_VERSION
from gitmem.config import load_config
from gitmem.config.ownership import Ownership
from gitmem.errors import ExitCode
from gitmem.recall.index import Index, scopes
from gitmem.recall.search import search
from gitmem.workspace import Workspace
from tests.support.helpers import AGENT, GitRepo, fill_in_rules

TEAM = """
workspaces:
  a:
    memory_dir: team
    files: {now: NOW-a.md, decisions: DECISIONS-a.md, log: LOG-a.md, lessons: LESSONS-a.md}
  b:
    memory_dir: team
    files: {now: NOW-b.md, decisions: DECISIONS-b.md, log: LOG-b.md, lessons: LESSONS-b.md}
"""


@pytest.fixture
def team(memrepo: GitRepo, cli) -> GitRepo:
    return _team(memrepo, cli)


def _team(memrepo: GitRepo, cli, *, rules: int = RULES_VERSION) -> GitRepo:
    config = memrepo.read("gitmem.yaml").replace(f"rules_version: {RULES_VERSION}", f"rules_version: {rules}")
    memrepo.write("gitmem.yaml", config + TEAM)
    made = cli(["init", "."], cwd=memrepo.path)
    assert made.code == ExitCode.OK, made.err
    fill_in_rules(memrepo.path)
    memrepo.stage(*[p.relative_to(memrepo.path).as_posix() for p in memrepo.path.rglob("*")
                    if p.is_file() and ".git" not in p.parts])
    memrepo.commit("two team workspaces sharing team/RULES.md and team/ROADMAP.md")
    return memrepo


def test_the_policy_names_every_owner_of_a_shared_file(team: GitRepo) -> None:
    config = load_config(team.path)
    owned = Ownership.of(config)
    assert owned.owners_of("team/RULES.md") == {"a", "b"} and owned.is_shared("team/ROADMAP.md")
    assert owned.owners_of("team/LOG-a.md") == {"a"} and owned.owners_of("LOG.md") == {""}
    assert owned.owners_of("notes.md") == frozenset()
    # What the runner reverts: another workspace's file, never one the cycle's workspace shares.
    assert "team/RULES.md" not in config.with_workspace("a").foreign_paths()
    assert config.foreign_paths()["team/RULES.md"] == ("a", "rules")
    assert owned.writers(["team/LOG-a.md", "team/RULES.md", "notes.md"]) == {"a"}
    assert owned.writers(["LOG.md", "team/RULES.md"]) == frozenset()
    assert owned.writers(["notes.md"]) is None


def _agent_commit(repo: GitRepo, *paths: str) -> None:
    for path in paths:
        repo.append(path, "\nmore\n")
    repo.stage(*paths)
    repo.commit("gitmem: cycle 2 · built · a task\n\nGitmem-Rules: 5\n", author=AGENT)


def test_the_default_agent_writing_the_teams_shared_files_is_gm923(team: GitRepo, cli) -> None:
    """The disagreement: GM923 counted a shared file for nobody, so the default workspace's agent could commit
    the team's RULES beside its own LOG, a commit its own runner would never make (the runner reverts it)."""
    start = team.head()
    _agent_commit(team, "LOG.md", "team/RULES.md")

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=team.path)

    assert result.code == ExitCode.VIOLATIONS, result.out
    flagged = {line.split(":")[0] for line in result.lines if " GM923 " in line}
    assert flagged == {"LOG.md", "team/RULES.md"}
    assert any("no one workspace owns all of ((default), a, b," in line for line in result.lines), result.out


def test_old_history_that_wrote_a_shared_file_beside_its_own_still_verifies(memrepo: GitRepo, cli) -> None:
    """Up to rules 4 a shared file counted for nobody: a commit made then is judged so still."""
    assert f"rules_version: {RULES_VERSION}" in memrepo.read("gitmem.yaml")
    team = _team(memrepo, cli, rules=4)
    start = team.head()
    for path in ("LOG.md", "team/RULES.md"):
        team.append(path, "\nmore\n")
    team.stage("LOG.md", "team/RULES.md")
    team.commit("gitmem: cycle 2 · built · a task\n\nGitmem-Rules: 4\n", author=AGENT)

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=team.path)

    assert not [line for line in result.lines if " GM923 " in line], result.out


@pytest.mark.parametrize("paths", [("team/LOG-a.md", "team/RULES.md"), ("team/ROADMAP.md",),
                                   ("team/LOG-b.md", "team/ROADMAP.md", "team/RULES.md")])
def test_a_sharer_writing_its_own_and_the_shared_files_passes(team: GitRepo, cli, paths: tuple[str, ...]) -> None:
    start = team.head()
    _agent_commit(team, *paths)

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=team.path)

    assert not [line for line in result.lines if " GM923 " in line], result.out


def test_two_sharers_own_files_in_one_agent_commit_are_still_gm923(team: GitRepo, cli) -> None:
    start = team.head()
    _agent_commit(team, "team/LOG-a.md", "team/RULES.md", "team/LOG-b.md")

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=team.path)

    assert {line.split(":")[0] for line in result.lines if " GM923 " in line} == {
        "team/LOG-a.md", "team/LOG-b.md", "team/RULES.md"}


def test_each_sharer_recalls_the_shared_rules(team: GitRepo) -> None:
    """The disagreement: recall filed a shared file under the first workspace naming it, so `b` never found
    its own rules. Now both sharers do, and the default workspace does not."""
    rules = team.read("team/RULES.md")
    team.write("team/RULES.md", rules.replace("## Proven rules\n", "## Proven rules\n- R-01 · the ferret kennel is "
                                              "cleaned every Tuesday (human)\n"))
    team.stage("team/RULES.md")
    team.commit("a team rule")

    for name in ("a", "b"):
        hits = search(Workspace.at(team.path, workspace=name), "ferret kennel Tuesday", mode="bm25")
        assert any(hit.path == "team/RULES.md" for hit in hits), name
    alone = search(Workspace.at(team.path), "ferret kennel Tuesday", mode="bm25")
    assert not any(hit.path == "team/RULES.md" for hit in alone)


def test_a_commit_to_the_shared_files_only_is_recalled_by_each_sharer(team: GitRepo) -> None:
    team.append("team/ROADMAP.md", "\nmore\n")
    team.append("team/RULES.md", "\nmore\n")
    team.stage("team/ROADMAP.md", "team/RULES.md")
    team.commit("the weasel migration plan for both teams")

    for name in ("a", "b"):
        hits = search(Workspace.at(team.path, workspace=name), "weasel migration plan", mode="bm25", kinds=["commit"])
        assert [hit.kind for hit in hits] == ["commit"], name


def test_recall_takes_the_workspaces_from_the_config_at_hand(team: GitRepo) -> None:
    """Recall read gitmem.yaml from disk again for a workspace's index; the config at hand says it all."""
    ws = Workspace.at(team.path, workspace="b")
    Path(team.path, "gitmem.yaml").write_text("workspaces: [not, a, mapping\n")

    index = Index(ws)

    assert index.scopes == scopes(ws.config)
    assert {path for scope in index.scopes for _, path in scope.paths} >= {"LOG.md", "team/LOG-a.md",
                                                                          "team/LOG-b.md", "team/RULES.md"}
