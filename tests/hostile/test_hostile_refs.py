"""Hostile agents, class 3c: the human's objects. The `command` agent runs as the same user, in the repository:
it deletes the human's unpushed branch, tags and stashes, expires every reflog and prunes. The runner bundled
what the remote lacked before the agent ran (gitmem.cycle.refs_backup); after it, every reference, stash entry
and commit is back and the tree is clean. The bundle is named by what it holds and kept: the next cycle with the
same refs reuses it, and a cycle deletes a kept one (a killed cycle's too) once its tips are held again. When
the bundle cannot be written the agent does not run (exit 4, GM716); when the objects cannot be put back the
cycle fails the same way, never with exit 2."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitmem.cycle.refs_backup import RefsBackup
from gitmem.errors import ExitCode
from tests.support.cycle_support import is_clean, origin_and_clone
from tests.support.gitcli import git, run_git
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent, evidence, no_traceback

# Every way the agent can drop the human's history, then the prune that makes it final.
DESTROY = """
def g(*args):
    subprocess.run(['git', *args], cwd=root, capture_output=True)
g('branch', '-D', 'human-work')
g('tag', '-d', 'v1')
g('tag', '-d', 'light')
g('stash', 'drop')
g('stash', 'clear')
g('reflog', 'expire', '--expire=now', '--all')
g('gc', '--quiet', '--prune=now', '--aggressive')
"""


def _human_work(repo: GitRepo) -> dict[str, str]:
    """An unpushed branch with two commits, an annotated and a lightweight tag on it, and three stashes (one
    with an untracked file): the objects only this checkout has. Returns what the agent will try to destroy."""
    root = repo.path
    git(root, "checkout", "-q", "-b", "human-work")
    for n in (1, 2):
        (root / f"human-{n}.txt").write_text(f"the human's work {n}\n")
        git(root, "add", f"human-{n}.txt")
        git(root, "commit", "-q", "-m", f"human work {n}")
    git(root, "tag", "-a", "v1", "-m", "the human's release")
    git(root, "tag", "light", "HEAD~1")
    git(root, "checkout", "-q", "main")
    for n, extra in ((1, []), (2, []), (3, ["--include-untracked"])):
        (root / "README.md").write_text(f"a change the human stashed {n}\n")
        (root / f"untracked-{n}.txt").write_text("untracked\n")
        if not extra:
            (root / f"untracked-{n}.txt").unlink()
        git(root, "stash", "push", "-q", *extra, "-m", f"stash {n}")
    assert is_clean(repo)
    return {"branch": git(root, "rev-parse", "human-work").strip(),
            "first": git(root, "rev-parse", "human-work~1").strip(), "tag": git(root, "rev-parse", "v1").strip(),
            **{f"stash{n}": git(root, "rev-parse", f"stash@{{{n}}}").strip() for n in range(3)}}


def _destroy(ids: dict[str, str], gone_at: Path) -> str:
    """DESTROY, then a check that the objects really are gone, written to `gone_at`."""
    return DESTROY + (f"gone = [o for o in {sorted(ids.values())!r}\n"
                      "        if subprocess.run(['git', 'cat-file', '-e', o], cwd=root,\n"
                      "                          capture_output=True).returncode]\n"
                      f"open({str(gone_at)!r}, 'w').write(' '.join(gone))\n")


def _refs(repo: GitRepo) -> dict[str, str]:
    return {name: target for name, target in (line.split(" ", 1) for line in
            git(repo.path, "for-each-ref", "--format=%(refname) %(objectname)").splitlines())
            if name != "refs/heads/main"}


def _stashes(repo: GitRepo) -> list[str]:
    return git(repo.path, "stash", "list", "--format=%H %gs").splitlines()


def _cloned(tmp_path: Path, memrepo: GitRepo, *flags: str) -> GitRepo:
    origin = origin_and_clone(tmp_path, memrepo)
    path = tmp_path / "clone"
    git(tmp_path, "clone", "-q", *flags, f"file://{origin}" if "--depth" in flags else str(origin), str(path))
    return GitRepo(path, pygit2.Repository(str(path)))


# Where the human's repository lives: each changes what the remote holds or where the objects are.
SETUPS: dict[str, Callable[[Path, GitRepo], GitRepo]] = {
    "pushed-main": lambda tmp, repo: (origin_and_clone(tmp, repo), repo)[1],
    "no-remote": lambda tmp, repo: repo,
    "empty-remote": lambda tmp, repo: (pygit2.init_repository(str(tmp / "empty.git"), bare=True),
                                       git(repo.path, "remote", "add", "origin", str(tmp / "empty.git")), repo)[2],
    "objects-in-an-alternate": lambda tmp, repo: _cloned(tmp, repo, "--shared"),
    "shallow-clone": lambda tmp, repo: _cloned(tmp, repo, "--depth", "1"),
}


def _bundles() -> list[Path]:
    return sorted(Path(os.environ["XDG_STATE_HOME"]).rglob("*.bundle"))


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_deleted_branches_tags_and_stashes_come_back_with_their_commits(tmp_path: Path, memrepo: GitRepo, cli,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        setup: str) -> None:
    repo = SETUPS[setup](tmp_path, memrepo)
    ids = _human_work(repo)
    refs, stashes = _refs(repo), _stashes(repo)
    gone_at = tmp_path / "gone.txt"
    command_agent(tmp_path, repo, _destroy(ids, gone_at))
    result = cli(["cycle", "--json"], cwd=repo.path)
    assert result.code == ExitCode.OK, result.err + result.out       # as for any reference the guard reverts
    assert no_traceback(result.err)
    assert set(gone_at.read_text().split()) == set(ids.values())     # the agent did destroy them all
    assert _refs(repo) == refs
    assert _stashes(repo) == stashes
    for oid in ids.values():
        run_git(repo.path, "cat-file", "-e", oid)
    assert git(repo.path, "show", "v1:human-2.txt") == "the human's work 2\n"
    assert "untracked-3.txt" in git(repo.path, "show", "--name-only", "--format=", "stash@{0}^3")
    run_git(repo.path, "fsck", "--no-dangling", "--connectivity-only")
    assert is_clean(repo)
    assert [path.name.startswith("refs-") for path in _bundles()] == [True]     # kept for the next cycle
    assert "put back" in evidence(repo) and "stash" in evidence(repo)


def test_everything_pushed_writes_no_bundle(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    origin_and_clone(tmp_path, memrepo)
    seen = tmp_path / "seen.txt"
    command_agent(tmp_path, memrepo, f"import glob\nopen({str(seen)!r}, 'w').write(' '.join(glob.glob("
                                     "os.environ.get('XDG_STATE_HOME', '') + '/**/*.bundle', recursive=True)))")
    git(memrepo.path, "push", "-q", "origin", "main")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert seen.read_text() == ""                     # nothing unpushed when the agent ran: nothing bundled


def test_the_bundle_holds_only_what_the_remote_lacks(tmp_path: Path, memrepo: GitRepo) -> None:
    from gitmem import gitio

    origin_and_clone(tmp_path, memrepo)
    ids = _human_work(memrepo)
    handle = memrepo.handle
    backup = RefsBackup.take(handle, gitio.references_all(handle), cycle=7)
    assert backup.path is not None and backup.path.parent.stat().st_mode & 0o777 == 0o700
    listed = git(memrepo.path, "bundle", "list-heads", str(backup.path))
    assert ids["branch"] in listed and "refs/stash" in listed
    # The pushed history is a prerequisite, not in the pack: the bundle has the human's objects only.
    run_git(memrepo.path, "bundle", "verify", str(backup.path))
    counted = git(memrepo.path, "rev-list", "--count", "--all", "--not", "--remotes").strip()
    objects = git(memrepo.path, "bundle", "list-heads", str(backup.path))
    assert int(counted) >= 2 and objects
    # The older stash entries are in the pack but not among its heads: the tips file names every one.
    tips = backup.path.with_suffix(".tips").read_text().split()
    assert {ids["stash1"], ids["stash2"], ids["tag"], ids["branch"]} <= set(tips)


def _take(repo: GitRepo) -> RefsBackup:
    from gitmem import gitio

    return RefsBackup.take(repo.handle, gitio.references_all(repo.handle), cycle=3)


def test_an_annotated_tag_is_bundled_once_and_the_next_cycle_reuses_that_bundle(tmp_path: Path, memrepo: GitRepo,
                                                                                cli) -> None:
    """Everything pushed but an annotated tag on a pushed commit (no remote-tracking ref holds a tag object): one
    small bundle is written; a cycle with the same refs writes none and still puts the tag back."""
    origin_and_clone(tmp_path, memrepo)
    command_agent(tmp_path, memrepo, "subprocess.run(['git', 'tag', '-d', 'v1'], cwd=root)\n"
                                     "subprocess.run(['git', 'gc', '--quiet', '--prune=now'], cwd=root)\n")
    git(memrepo.path, "push", "-q", "origin", "main")
    git(memrepo.path, "tag", "-a", "v1", "-m", "the human's release")
    tag = git(memrepo.path, "rev-parse", "v1").strip()
    first = _take(memrepo).path
    assert first is not None and first.stat().st_size < 4096
    written = (first.stat().st_ino, first.stat().st_mtime_ns)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err + result.out
    assert git(memrepo.path, "rev-parse", "v1").strip() == tag and "put back" in evidence(memrepo)
    assert _bundles() == [first] and (first.stat().st_ino, first.stat().st_mtime_ns) == written   # reused
    # The cycle's commit is unpushed: a new bundle of that commit on top of the first, which the chain keeps.
    second = _take(memrepo).path
    assert second is not None and second != first and _bundles() == sorted([first, second])
    assert _chain(second) == [first, second] and second.stat().st_size < 8192


def test_a_bundle_a_killed_cycle_left_is_pruned_once_its_tips_are_held_again(memrepo: GitRepo) -> None:
    """A killed cycle's bundle outside the chain (the chain file never named it): deleted once its tips are held."""
    _human_work(memrepo)
    killed = _take(memrepo).path               # a cycle killed while its agent ran: its bundle stays behind
    assert killed is not None
    (killed.parent / "chain").unlink()          # killed before the chain file named it
    (killed.parent / (killed.name + ".partial")).write_bytes(b"half a bundle")       # a write cut short
    _commit_on(memrepo, "human-work", "more.txt")
    now = _take(memrepo)
    assert now.path is not None and now.path != killed
    assert _bundles() == [now.path]                    # every tip of the old one is held: the branch grew
    assert sorted(p.name for p in now.path.parent.iterdir()) == sorted([now.path.name, now.path.stem + ".tips",
                                                                         "chain"])
    assert now.messages == []


def _commit_on(repo: GitRepo, branch: str, name: str) -> str:
    git(repo.path, "checkout", "-q", branch)
    (repo.path / name).write_text(f"{name}\n")
    git(repo.path, "add", name)
    git(repo.path, "commit", "-q", "-m", f"add {name}")
    made = git(repo.path, "rev-parse", "HEAD").strip()
    git(repo.path, "checkout", "-q", "main")
    return made


def _chain(bundle: Path) -> list[Path]:
    return [bundle.parent / f"{stem}.bundle" for stem in (bundle.parent / "chain").read_text().split()]


def _big_history(repo: GitRepo, commits: int) -> None:
    """`commits` commits of 20 KB of incompressible bytes each on main, with no remote: a history worth bundling."""
    for n in range(commits):
        (repo.path / f"history-{n}.bin").write_bytes(os.urandom(20_000))
        git(repo.path, "add", f"history-{n}.bin")
        git(repo.path, "commit", "-q", "-m", f"history {n}")


def test_with_no_remote_a_cycle_bundles_only_its_new_commits_and_unchanged_refs_write_nothing(
        memrepo: GitRepo) -> None:
    """No remote-tracking ref: the first backup holds the whole history, the next one only the commit made since
    (its prerequisite is the first one's tip), and refs that did not change write no bundle at all."""
    _big_history(memrepo, 10)
    first = _take(memrepo).path
    assert first is not None and first.stat().st_size > 200_000
    tip = _commit_on(memrepo, "main", "one-more.txt")
    second = _take(memrepo).path
    assert second is not None and second != first and second.stat().st_size < 4096
    assert _chain(second) == [first, second]
    verified = git(memrepo.path, "bundle", "verify", str(second))
    assert tip in git(memrepo.path, "bundle", "list-heads", str(second)) and "requires" in verified
    stamps = {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in second.parent.iterdir()}
    again = _take(memrepo)
    assert again.path == second and again.chain == [first, second]
    assert {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in second.parent.iterdir()} == stamps


def test_the_chain_puts_back_a_history_the_agent_destroyed(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    """Three cycles with no remote, each bundling only its own new commits; the third cycle's agent deletes
    every branch, tag and stash and prunes: all of it comes back from the chain, oldest bundle first."""
    _big_history(memrepo, 3)
    command_agent(tmp_path, memrepo, "pass\n")
    ids = _human_work(memrepo)          # in the first bundle only: the later ones hold the cycles' commits
    for _ in range(2):
        result = cli(["cycle", "--json"], cwd=memrepo.path)
        assert result.code == ExitCode.OK, result.err + result.out
    gone_at = tmp_path / "gone.txt"
    command_agent(tmp_path, memrepo, _destroy(ids, gone_at))
    refs, stashes = _refs(memrepo), _stashes(memrepo)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err + result.out
    assert set(gone_at.read_text().split()) == set(ids.values())     # the agent did destroy them all
    listed = sorted((Path(os.environ["XDG_STATE_HOME"]) / "gitmem").rglob("chain"))
    assert len(listed) == 1 and len(listed[0].read_text().split()) == 3      # one bundle per cycle, none rewritten
    assert _refs(memrepo) == refs and _stashes(memrepo) == stashes
    for oid in ids.values():
        run_git(memrepo.path, "cat-file", "-e", oid)
    run_git(memrepo.path, "fsck", "--no-dangling", "--connectivity-only")
    assert is_clean(memrepo) and "put back" in evidence(memrepo)


def test_a_chain_built_on_what_the_remote_no_longer_holds_starts_over(tmp_path: Path, memrepo: GitRepo) -> None:
    """The first bundle took the remote's branch as pushed; then the remote was force-pushed and fetched. Those
    commits are now only here: the next backup holds them again instead of building on the old bundle."""
    origin = origin_and_clone(tmp_path, memrepo)
    older = git(memrepo.path, "rev-parse", "HEAD").strip()
    pushed = _commit_on(memrepo, "main", "pushed.txt")
    git(memrepo.path, "push", "-q", "origin", "main")
    _commit_on(memrepo, "main", "unpushed.txt")
    first = _take(memrepo)
    assert first.chain and _prerequisites_of(first.chain[0]) == [pushed]
    git(origin, "update-ref", "refs/heads/main", older)           # a force-push: the remote forgot `pushed`
    git(memrepo.path, "fetch", "-q", "origin")
    _commit_on(memrepo, "main", "later.txt")
    later = _take(memrepo)
    assert later.chain == [later.path] and later.path != first.path
    assert pushed not in _prerequisites_of(later.chain[0])     # `pushed` is in the new bundle itself
    run_git(memrepo.path, "bundle", "verify", str(later.path))


def _prerequisites_of(bundle: Path) -> list[str]:
    from gitmem.cycle.refs_backup import _prerequisites

    return _prerequisites(bundle)


def test_the_chain_starts_over_when_it_is_full_or_broken(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.cycle import refs_backup

    monkeypatch.setattr(refs_backup, "MAX_CHAIN", 2)
    _big_history(memrepo, 2)
    taken = [_take(memrepo).path]
    _commit_on(memrepo, "main", "a.txt")
    taken.append(_take(memrepo).path)
    assert taken[1] is not None and _chain(taken[1]) == taken
    _commit_on(memrepo, "main", "b.txt")
    full = _take(memrepo)         # the chain is full: one bundle of everything, and the old ones go
    assert full.chain == [full.path] and _bundles() == [full.path]
    assert full.path is not None and full.path.stat().st_size > 40_000
    _commit_on(memrepo, "main", "c.txt")
    small = _take(memrepo)
    assert small.chain == [full.path, small.path]
    full.path.unlink()            # a bundle of the chain is gone: the next bundle holds everything again
    _commit_on(memrepo, "main", "d.txt")
    anew = _take(memrepo)
    assert anew.chain == [anew.path] and anew.path is not None and anew.path.stat().st_size > 40_000


def test_a_bundle_holding_what_no_reference_holds_stays_and_is_named(memrepo: GitRepo) -> None:
    """A killed cycle's agent deleted the branch and pruned, and nothing put it back: its bundle is the human's
    only copy. Newer cycles keep it (never pruned by age) and say where it is."""
    ids = _human_work(memrepo)
    killed = _take(memrepo).path
    assert killed is not None
    for args in (("branch", "-D", "human-work"), ("tag", "-d", "v1"), ("tag", "-d", "light"),
                 ("reflog", "expire", "--expire=now", "--all"), ("gc", "--quiet", "--prune=now")):
        git(memrepo.path, *args)
    assert run_git(memrepo.path, "cat-file", "-e", ids["branch"], check=False).returncode != 0
    from gitmem import gitio

    gitio.forget_cached(memrepo.handle)             # what a new process sees
    for _ in range(2):
        later = _take(memrepo)
        assert killed.exists() and killed in _bundles()
        assert len(later.messages) == 1 and str(killed) in later.messages[0]
    run_git(memrepo.path, "bundle", "unbundle", str(killed))       # the human's way back
    run_git(memrepo.path, "cat-file", "-e", ids["branch"])


# -- the failures: exit 4 with GM716, a clean tree, nothing of the human's lost -------------------------------------

def _state_dir_blocked(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "blocked-state"
    state.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    if kind == "a-file-in-the-way":
        (state / "gitmem").write_text("not a directory\n")
    else:
        (state / "gitmem").mkdir()
        os.chmod(state / "gitmem", stat.S_IRUSR | stat.S_IXUSR)


@pytest.mark.parametrize("kind", ["a-file-in-the-way",
                                  pytest.param("read-only", marks=pytest.mark.skipif(
                                      os.geteuid() == 0, reason="root writes into a read-only directory"))])
def test_an_unwritable_backup_directory_stops_the_cycle_before_the_agent(tmp_path: Path, memrepo: GitRepo, cli,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          kind: str) -> None:
    ids = _human_work(memrepo)
    refs, stashes = _refs(memrepo), _stashes(memrepo)
    ran = tmp_path / "ran.txt"
    command_agent(tmp_path, memrepo, f"open({str(ran)!r}, 'w').write('ran')\n" + DESTROY)
    _state_dir_blocked(kind, tmp_path, monkeypatch)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.err + result.out
    assert no_traceback(result.err)
    assert not ran.exists()                                         # the agent never ran
    report = json.loads(result.out)
    assert any(v["code"] == "GM716" for v in report["violations"])
    assert "could not back up" in report["error"]
    assert is_clean(memrepo)
    assert _refs(memrepo) == refs and _stashes(memrepo) == stashes
    assert all(memrepo.repo.get(oid) is not None for oid in ids.values())
    assert "no-build" in memrepo.read("LOG.md").rsplit("## ", 1)[-1]    # Rule 0: the cycle still logs


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a user namespace")
def test_a_backup_folder_this_user_cannot_read_stops_the_cycle_with_gm716_not_a_traceback(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The backup folder belongs to another user (made by a `sudo gitmem cycle`, say) and is 0700: reading it is
    EACCES. As root the cycle runs in a user namespace, where a folder of an unmapped owner is as closed as it is
    to any user. Exit 4, `<folder>:1: GM716`, the agent never ran, nothing of the human's lost."""
    ids = _human_work(memrepo)
    refs, stashes = _refs(memrepo), _stashes(memrepo)
    ran = tmp_path / "ran.txt"
    command_agent(tmp_path, memrepo, f"open({str(ran)!r}, 'w').write('ran')\n" + DESTROY)
    from gitmem import gitio
    from gitmem.cycle.refs_backup import backup_dir

    folder = backup_dir(memrepo.handle)
    folder.mkdir(parents=True)
    (folder / "chain").write_text("")
    if os.geteuid() == 0:
        for path in (folder, folder / "chain"):
            os.chown(path, 65534, 65534)
        os.chmod(folder, 0o700)
        argv = ["unshare", "-r", str(GITMEM), "cycle"]
        if subprocess.run(["unshare", "-r", "true"], capture_output=True).returncode:
            pytest.skip("this kernel refuses a user namespace")
    else:
        os.chmod(folder, 0)
        argv = [str(GITMEM), "cycle"]
    try:
        done = subprocess.run(argv, cwd=memrepo.path, capture_output=True, text=True, timeout=120)
    finally:
        os.chmod(folder, 0o700)
    assert done.returncode == ExitCode.SALVAGED, done.stderr + done.stdout
    assert no_traceback(done.stderr + done.stdout)
    assert f"{folder}:1: GM716" in done.stderr + done.stdout and "could not back up" in done.stderr + done.stdout
    assert not ran.exists()
    gitio.forget_cached(memrepo.handle)
    assert is_clean(memrepo) and _refs(memrepo) == refs and _stashes(memrepo) == stashes
    assert all(memrepo.repo.get(oid) is not None for oid in ids.values())
    assert "no-build" in memrepo.read("LOG.md").rsplit("## ", 1)[-1]


def test_objects_that_cannot_be_put_back_fail_the_cycle_cleanly(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    """The agent finds the bundle too (same uid: best effort, not secrecy): exit 4 and GM716, not a raw git error."""
    _human_work(memrepo)
    command_agent(tmp_path, memrepo, "import glob\nfor b in glob.glob(os.environ['XDG_STATE_HOME'] + "
                                     "'/**/*.bundle', recursive=True):\n    os.unlink(b)\n"
                  + DESTROY)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.err + result.out
    assert no_traceback(result.err)
    report = json.loads(result.out)
    assert any(v["code"] == "GM716" for v in report["violations"])
    assert is_clean(memrepo)
    assert "could not put back" in evidence(memrepo)



def test_thousands_of_references_the_agent_makes_are_kept_and_named_in_one_line(memrepo: GitRepo) -> None:
    """Each tag or branch the agent made was one line of the cycle's output: 20,000 tags printed 20,000 lines."""
    from tests.support.hostile import cycle

    def act(root: Path, memory, request) -> None:
        head = git(root, "rev-parse", "HEAD").strip()
        stdin = "".join(f"create refs/tags/agent-{i:04d} {head}\n" for i in range(400))
        subprocess.run(["git", "update-ref", "--stdin"], input=stdin, text=True, cwd=root, check=True)
        git(root, "branch", "its-own-branch")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    said = [m for m in report.messages if "the agent created" in m]
    assert len(said) == 1, len(said)
    assert "refs/heads/its-own-branch" in said[0] and "and 389 more" in said[0] and "never pushed" in said[0]
    assert len(said[0]) < 2_000
    assert len([r for r in memrepo.repo.references if r.startswith("refs/tags/agent-")]) == 400
