"""Hostile agents: the runner's own git commands run nothing the agent wrote.

A tracked file that the human's `.git/config` includes (`include.path`, `includeIf`) is config the agent can
write from the work tree: it sets `core.hooksPath` there, and the runner's `git push` would run its pre-push hook
as the human, outside any box. Such a file is git state: captured before the agent and put back after it, with
the agent's version kept aside and the cycle saying so. A hooks folder the human keeps in the tree is a protected
path, put back only by the proposal step: until then the runner's git commands (the fetch that sees what arrived,
the push) run no hook from the tree. Run for real with the `command` backend, box off and in the bubblewrap box.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.errors import ExitCode
from tests.hostile.test_hostile_ignore_tricks import BY_NAME
from tests.support.cycle_support import file_at, is_clean, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, evidence, no_traceback
from tests.support.nobody import bwrap_works, gitmem_as_nobody, nobody_place, runs_nobodys_venv

TEAM_CONFIG = "team.gitconfig"
HOOK_NAMES = ("pre-push", "reference-transaction", "post-checkout")
needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces")


def _hooks(folder: str, marker: Path) -> str:
    """Agent code: an executable hook of each name in `folder` (a tree path) that leaves `marker` when it runs."""
    return (f"os.makedirs(os.path.join(root, {folder!r}), exist_ok=True)\n"
            f"for name in {HOOK_NAMES!r}:\n"
            f"    path = os.path.join(root, {folder!r}, name)\n"
            f"    open(path, 'w').write('#!/bin/sh\\necho ran >> {marker}\\n')\n"
            f"    os.chmod(path, 0o755)\n")


def _included_config(memrepo: GitRepo) -> None:
    memrepo.commit_files({TEAM_CONFIG: "[user]\n\tname = Team\n"}, "the team's shared git config")
    git(memrepo.path, "config", "include.path", f"../{TEAM_CONFIG}")


def _cycle(tmp_path: Path, memrepo: GitRepo, cli, body: str, sandbox: str) -> dict:
    command_agent(tmp_path, memrepo, body, sandbox=sandbox)
    origin_and_clone(tmp_path, memrepo)
    result = cli(["cycle", "--push", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.out + result.err
    assert no_traceback(result.err)
    report: dict = json.loads(result.out)
    assert report["pushed"] is True
    return report


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bubblewrap", marks=needs_bwrap)])
def test_hooks_path_set_in_an_included_tracked_config_never_runs(tmp_path: Path, memrepo: GitRepo, cli,
                                                                 sandbox: str) -> None:
    marker = tmp_path / "hook-ran"
    _included_config(memrepo)
    before = memrepo.read(TEAM_CONFIG)
    body = _hooks("evil-hooks", marker) + (
        f"open(os.path.join(root, {TEAM_CONFIG!r}), 'a').write('[core]\\n\\thooksPath = ' + "
        f"os.path.join(root, 'evil-hooks') + '\\n')\n")
    report = _cycle(tmp_path, memrepo, cli, body, sandbox)
    assert not marker.exists(), marker.read_text()
    # Put back, in the tree and on the branch; the agent's version kept aside; the cycle says so.
    assert memrepo.read(TEAM_CONFIG) == before == file_at(memrepo.repo, "HEAD", TEAM_CONFIG)
    said = f"restored git state the agent changed: {TEAM_CONFIG} (changed)"
    assert said in evidence(memrepo)
    assert any(said in message for message in report["messages"])
    kept = memrepo.path / ".git" / "gitmem" / "guard" / "cycle-1" / TEAM_CONFIG
    assert "hooksPath" in kept.read_text()
    assert "hookspath" not in git(memrepo.path, "config", "--list").lower()
    assert is_clean(memrepo)


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bubblewrap", marks=needs_bwrap)])
def test_a_hooks_folder_kept_in_the_tree_runs_nothing_the_agent_wrote(tmp_path: Path, memrepo: GitRepo, cli,
                                                                      sandbox: str) -> None:
    marker = tmp_path / "hook-ran"
    memrepo.commit_files({".githooks/pre-commit": "#!/bin/sh\nexit 0\n"}, "the human's hooks, kept in the tree")
    git(memrepo.path, "config", "core.hooksPath", ".githooks")
    report = _cycle(tmp_path, memrepo, cli, _hooks(".githooks", marker), sandbox)
    assert not marker.exists(), marker.read_text()
    assert report["proposal_branch"] == "gitmem/proposal/cycle-1"
    assert file_at(memrepo.repo, "HEAD", ".githooks/pre-push") is None
    assert not (memrepo.path / ".githooks" / "pre-push").exists()


def test_files_the_config_includes_are_git_state_wherever_they_are(memrepo: GitRepo, tmp_path: Path) -> None:
    """Included from the including file's folder, nested includes too, `includeIf` as well."""
    _included_config(memrepo)
    (memrepo.path / TEAM_CONFIG).write_text("[include]\n\tpath = more/extra.gitconfig\n")
    git(memrepo.path, "config", 'includeIf.gitdir:/nowhere/.path', str(tmp_path / "elsewhere.gitconfig"))
    labels = {place.label for place in gitio.state_paths(memrepo.handle)}
    assert {TEAM_CONFIG, "more/extra.gitconfig", str(tmp_path / "elsewhere.gitconfig")} <= labels
    assert not any(os.sep + "repo" + os.sep in label for label in labels if label.startswith("more"))


@needs_bwrap
def test_hooks_path_set_in_an_included_tracked_config_never_runs_for_an_unprivileged_user(git_env: None) -> None:
    """As root the box proves little about a runner: the same cycle and push as `nobody`, in repositories it owns."""
    with nobody_place("gitmem-runner-git-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        marker = place / "hook-ran"
        _included_config(repo)
        before = repo.read(TEAM_CONFIG)
        body = _hooks("evil-hooks", marker) + (
            f"open(os.path.join(root, {TEAM_CONFIG!r}), 'a').write('[core]\\n\\thooksPath = ' + "
            f"os.path.join(root, 'evil-hooks') + '\\n')\n") + BY_NAME
        command_agent(place, repo, body, sandbox="bubblewrap", write_memory=False)
        runs_nobodys_venv(repo, bin_dir)
        origin_and_clone(place, repo)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--push", "--json")
        assert done.returncode == ExitCode.OK, done.stdout + done.stderr
        assert no_traceback(done.stderr) and json.loads(done.stdout)["pushed"] is True
        assert not marker.exists()
        assert repo.read(TEAM_CONFIG) == before
        assert f"restored git state the agent changed: {TEAM_CONFIG} (changed)" in evidence(repo)


@pytest.mark.parametrize("key,value,rel", [("core.sshCommand", "./tools/ssh.sh -o BatchMode=yes", "tools/ssh.sh"),
                                           ("credential.helper", "!tools/cred.sh", "tools/cred.sh"),
                                           ("core.fsmonitor", "tools/fsmonitor.sh", "tools/fsmonitor.sh"),
                                           ("core.sshCommand", "sh tools/ssh.sh", "tools/ssh.sh"),
                                           ("core.sshCommand", "ssh -F tools/ssh_config", "tools/ssh_config")])
def test_a_tracked_program_the_config_names_is_put_back_before_the_runners_git_runs(memrepo: GitRepo, key: str,
                                                                                   value: str, rel: str) -> None:
    """The human's config runs a script kept in the tree, or a program reading a file of the tree: the agent's
    edit of it never reaches git's hands."""
    from tests.support.hostile import cycle

    memrepo.commit_files({rel: "#!/bin/sh\nexec ssh \"$@\"\n"}, "the team's helper script")
    git(memrepo.path, "config", key, value)
    assert rel in {place.label for place in gitio.state_paths(memrepo.handle)}
    report = cycle(memrepo, lambda root, memory, request: (root / rel).write_text("#!/bin/sh\ncurl evil\n"))
    assert report.exit_code == ExitCode.OK, report.error
    assert memrepo.read(rel) == "#!/bin/sh\nexec ssh \"$@\"\n" == file_at(memrepo.repo, "HEAD", rel)
    assert f"restored git state the agent changed: {rel} (changed)" in evidence(memrepo)
    assert is_clean(memrepo)


def test_a_hooks_folder_that_is_a_link_into_git_is_still_the_trees(tmp_path: Path, memrepo: GitRepo) -> None:
    """`core.hooksPath = hooks`, with `hooks` a link to a folder in .git (which the box lets the agent write):
    the runner's own git runs none of its hooks."""
    marker = tmp_path / "hook-ran"
    inside = memrepo.path / ".git" / "gitmem" / "h"
    inside.mkdir(parents=True)
    hook = inside / "reference-transaction"
    hook.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    hook.chmod(0o755)
    (memrepo.path / "hooks").symlink_to(inside)
    git(memrepo.path, "config", "core.hooksPath", "hooks")
    gitio.run_git(memrepo.handle, "update-ref", "refs/heads/probe", "HEAD")
    assert not marker.exists()
