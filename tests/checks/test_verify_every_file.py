"""`gitmem verify`, the required check, reads what `gitmem check` reads: GM903 over every file a commit brings,
not only the memory files. Commits made under rules 1-4 are not read this way, so old history keeps passing."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.codes import RULES_VERSION
from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo

TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"


def _verify(cli, repo: GitRepo, start: str):
    return cli(["verify", "--range", f"{start}..HEAD"], cwd=repo.path)


@pytest.mark.parametrize("rel,content", [("src/settings.py", f"TOKEN = '{TOKEN}'\n"),
                                         (f"notes/{TOKEN}.txt", "a name that holds it\n")],
                         ids=["content", "name"])
def test_verify_refuses_a_secret_in_a_file_outside_memory(memrepo: GitRepo, cli, rel: str, content: str) -> None:
    start = memrepo.head()
    memrepo.commit_files({rel: content}, "slipped past the hook")
    memrepo.commit_files({"README.md": memrepo.read("README.md") + "\nmore\n"}, "after it")
    result = _verify(cli, memrepo, start)
    assert result.code == ExitCode.VIOLATIONS, result.out + result.err
    line = next(line for line in result.lines if "GM903" in line)
    assert line.startswith(f"{rel.replace(TOKEN, '')[:6]}") and "(commit " in line
    assert TOKEN not in result.out + result.err
    # `check` says the same of the same change.
    memrepo.write("src/again.py", f"TOKEN = '{TOKEN}'\n")
    git(memrepo.path, "add", "src/again.py")
    assert "GM903" in cli(["check"], cwd=memrepo.path).out


def test_verify_reads_a_symlinks_target_and_honours_the_commits_allowlist(memrepo: GitRepo, cli) -> None:
    start = memrepo.head()
    (memrepo.path / "link").symlink_to(f"/tmp/{TOKEN}")
    git(memrepo.path, "add", "link")
    memrepo.commit("a link")
    assert "link:1: GM903 the symlink's target" in _verify(cli, memrepo, start).out
    allowed = memrepo.head()
    memrepo.commit_files({".gitmem-allow-secrets": "fixtures/\n", "fixtures/key.txt": f"{TOKEN}\n"}, "a fixture")
    assert _verify(cli, memrepo, allowed).code == ExitCode.OK


def test_a_merge_answers_for_what_it_brings_not_for_what_a_parent_brought(memrepo: GitRepo, cli) -> None:
    start = memrepo.head()
    git(memrepo.path, "switch", "-q", "-c", "side")
    memrepo.commit_files({"side.txt": f"{TOKEN}\n"}, "the side brings it")
    git(memrepo.path, "switch", "-q", "main")
    memrepo.commit_files({"main.txt": "plain\n"}, "main moves on")
    git(memrepo.path, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    result = _verify(cli, memrepo, start)
    found = [line for line in result.lines if "GM903" in line]
    assert len(found) == 1 and found[0].startswith("side.txt:1: GM903"), result.out


def test_history_made_under_rules_4_is_not_read_this_way(tmp_path: Path, git_env: None, cli) -> None:
    repo = make_repo(tmp_path / "old", commit=False)
    text = repo.read("gitmem.yaml")
    repo.write("gitmem.yaml", text.replace(f"rules_version: {RULES_VERSION}", "rules_version: 4"))
    repo.stage("gitmem.yaml")
    repo.commit("an older repository")
    start = repo.head()
    repo.commit_files({"tests/fixture.txt": f"{TOKEN}\n"}, "a fixture from before rules 5")
    assert _verify(cli, repo, start).code == ExitCode.OK


def test_a_key_in_a_humans_other_file_fails_verify_but_does_not_stop_every_later_cycle(memrepo: GitRepo,
                                                                                      cli) -> None:
    """The cycle's preflight judges memory: history cannot lose the key, so refusing would refuse forever."""
    from tests.support.hostile import cycle

    start = memrepo.head()
    memrepo.commit_files({"src/settings.py": f"TOKEN = '{TOKEN}'\n"}, "slipped past the hook")
    report = cycle(memrepo, lambda root, memory, request: None)
    assert report.exit_code == ExitCode.OK, report.error
    assert _verify(cli, memrepo, start).code == ExitCode.VIOLATIONS


def test_check_and_verify_read_gitmem_yaml_for_secrets_too(memrepo: GitRepo, cli) -> None:
    """gitmem.yaml is no memory file: the memory rules never read it for secrets, so it is read as a file."""
    start = memrepo.head()
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + f"# {TOKEN}\n")
    git(memrepo.path, "add", "gitmem.yaml")
    assert any(line.startswith("gitmem.yaml:") and "GM903" in line for line in cli(["check"], cwd=memrepo.path).lines)
    memrepo.commit("a key in the config")
    assert any(line.startswith("gitmem.yaml:") and "GM903" in line for line in _verify(cli, memrepo, start).lines)
