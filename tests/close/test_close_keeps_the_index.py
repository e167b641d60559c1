"""The close commits the memory files and nothing else, and it runs in a checkout whose other files may be in
the middle of the human's work (only dirty memory files refuse it). Its commit reset the whole index to the new
tree: what the human had staged came unstaged (a new file became untracked, `git add -p` hunks were lost), and
a merge in progress lost its conflict state, so the next `git commit` would record the merge without the other
side's change. Only the paths the close commits take the new tree's entries now."""
from __future__ import annotations

from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import HUMAN, GitRepo
from tests.support.world import World, at, d


def _porcelain(repo: GitRepo) -> list[str]:
    return sorted(git(repo.path, "status", "--porcelain").splitlines())


def test_what_the_human_staged_stays_staged(memrepo: GitRepo) -> None:
    world = World(memrepo)
    world.cycle(at(10, 9))
    memrepo.write("work.txt", "one\n")
    memrepo.commit_files({"work.txt": "one\n"}, "work", author=HUMAN)
    memrepo.write("src.py", "print('new')\n")
    memrepo.write("work.txt", "one\ntwo\n")
    git(memrepo.path, "add", "src.py", "work.txt")
    memrepo.write("work.txt", "one\ntwo\nthree, not staged\n")
    before = _porcelain(memrepo)
    assert before == ["A  src.py", "MM work.txt"]
    result = world.close(d(10), at(10, 23))
    assert result.status == "closed" and memrepo.head() == result.commit
    assert _porcelain(memrepo) == before
    assert git(memrepo.path, "show", ":work.txt") == "one\ntwo\n"                 # the staged version, as staged
    assert git(memrepo.path, "diff", "--cached", "--name-only").split() == ["src.py", "work.txt"]
    assert git(memrepo.path, "diff", "--name-only", "HEAD", "--", "LOG.md", "NOW.md") == ""


def test_a_merge_in_progress_keeps_its_conflict(memrepo: GitRepo) -> None:
    world = World(memrepo)
    memrepo.commit_files({"README.md": "base\n"}, "readme", author=HUMAN)
    git(memrepo.path, "checkout", "--quiet", "-b", "side")
    memrepo.commit_files({"README.md": "side\n"}, "side", author=HUMAN)
    git(memrepo.path, "checkout", "--quiet", "main")
    world.cycle(at(10, 9))
    memrepo.commit_files({"README.md": "main\n"}, "main's readme", author=HUMAN)
    run_git(memrepo.path, "merge", "--quiet", "side", env=isolated_env(who=HUMAN), check=False)
    assert _porcelain(memrepo) == ["UU README.md"]
    world.close(d(10), at(10, 23))
    assert _porcelain(memrepo) == ["UU README.md"]
    assert (memrepo.path / ".git" / "MERGE_HEAD").exists()
