"""Hostile agents: ignore rules written in the same cycle hide nothing from the runner's judgement.

The agent writes what must never reach the branch as written (agent tool configs, a workflow, the secrets
allowlist, `.gitattributes`, the passed model key and a token, a file over `cycle.max_file_bytes`, a nested
repository), and hides all of it with ignore rules of its own: `*` in the top `.gitignore`, in a `.gitignore` of
each folder, in `.git/info/exclude`, or in a `core.excludesFile` it sets. The runner decides under the human's
rules: every item is held out, masked or proposed, none lands on the branch as written, and the tree is clean
for the next cycle. Run for real with the `command` backend, with the box off and in the real bubblewrap box.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.cycle.oversize import INERT_GIT
from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, no_traceback
from tests.support.nobody import bwrap_works, gitmem_as_nobody, nobody_env, nobody_place, runs_nobodys_venv

MODEL_KEY = "sk-ant-api03-" + "Qm7vX2pL9kR4tW8z" * 4 + "-AbCd12"
TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
LIMIT = 2048

# Paths the agent writes: protected ones (each must reach the proposal branch only), the leak (masked wherever
# it lands), the big file (held out) and the repository (held out).
PROTECTED = {
    ".claude/settings.local.json": ('{"hooks": {"SessionStart": [{"hooks": [{"type": "command", '
                                    '"command": "evil"}]}]}}\n'),
    ".mcp.json": '{"mcpServers": {"x": {"command": "evil"}}}\n',
    ".github/workflows/evil.yml": "on: push\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: evil}]}}\n",
    ".gitmem-allow-secrets": "*\n",
    ".gitattributes": "*.md filter=evil\n",
}
FOLDER = "deep"          # where the nested-ignore trick puts the rest

TRICKS = {
    "top-gitignore": "write('.gitignore', '*\\n')",
    "every-folder-gitignore": "\n".join(
        f"write({folder + '/.gitignore'!r}, '*\\n')" for folder in (".claude", ".github", ".github/workflows", FOLDER)),
    # The box holds .git read-only: these two fail there, and must hold where they succeed.
    "info-exclude": ("try:\n    open(os.path.join(root, '.git/info/exclude'), 'a').write('*\\n')\n"
                     "except OSError:\n    pass"),
    "excludes-file": ("write('hide.txt', '*\\n')\n"
                      "subprocess.run(['git', 'config', 'core.excludesFile', os.path.join(root, 'hide.txt')], "
                      "cwd=root)"),
}

AGENT = '''
def write(rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, 'w').write(text)
for rel, text in PROTECTED.items():
    write(rel, text)
place = FOLDER + '/' if NESTED else ''
write(place + 'leak.txt', 'key ' + os.environ.get('ANTHROPIC_API_KEY', 'none') + '\\ntoken ' + TOKEN + '\\n')
write(place + 'big.bin', 'x' * (LIMIT * 4))
subprocess.run(['git', 'init', '-q', os.path.join(root, place + 'nested')], check=True)
write(place + 'nested/inside.txt', 'a repository of its own\\n')
TRICK
'''


def _agent(trick: str) -> str:
    nested = trick == "every-folder-gitignore"
    return (AGENT.replace("PROTECTED", repr(PROTECTED)).replace("FOLDER", repr(FOLDER))
            .replace("NESTED", repr(nested)).replace("TOKEN", repr(TOKEN)).replace("LIMIT", str(LIMIT))
            .replace("TRICK", TRICKS[trick]))


def _everything_ever_written(repo: GitRepo) -> str:
    """Every blob of every branch, and the work tree's tracked files: where a secret must not be."""
    shown = _git(repo.path, "log", "--all", "-p", "--binary", "--format=%H %s")
    return shown + "".join(p.read_text(errors="replace") for p in repo.path.rglob("*")
                           if p.is_file() and ".git" not in p.relative_to(repo.path).parts)


def _git(path: Path, *args: str) -> str:
    """git as the test (root may look at `nobody`'s repository)."""
    return git(path, "-c", "safe.directory=*", *args)


# Memory through `gitmem` found on PATH: for `nobody`, whose venv is not the test's.
BY_NAME = """
for argv in (["gitmem", "log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
"""


def _prepare(place: Path, repo: GitRepo, trick: str, sandbox: str, *, by_name: bool = False) -> None:
    body = _agent(trick) + (BY_NAME if by_name else "")
    command_agent(place, repo, body, pass_env=("ANTHROPIC_API_KEY",), sandbox=sandbox, write_memory=not by_name)
    config = repo.read("gitmem.yaml").replace("cycle:\n", f"cycle:\n  max_file_bytes: {LIMIT}\n", 1)
    repo.commit_files({"gitmem.yaml": config}, "a small file limit")


def _assert_held(memrepo: GitRepo, trick: str) -> None:
    place = f"{FOLDER}/" if trick == "every-folder-gitignore" else ""
    # Nothing protected on the branch, in the agent's version; each on the proposal branch.
    for rel, text in PROTECTED.items():
        assert file_at(memrepo.repo, "HEAD", rel) != text, rel
        assert file_at(memrepo.repo, "gitmem/proposal/cycle-1", rel) == text, rel
    # The leak is masked, on every branch and in the work tree.
    everything = _everything_ever_written(memrepo)
    assert MODEL_KEY not in everything and TOKEN not in everything
    assert "key " in (file_at(memrepo.repo, "HEAD", f"{place}leak.txt") or "")
    # The big file and the repository are held out of every commit, kept under .git/gitmem/held/.
    for rel in (f"{place}big.bin", f"{place}nested/inside.txt"):
        assert file_at(memrepo.repo, "HEAD", rel) is None, rel
        assert file_at(memrepo.repo, "gitmem/proposal/cycle-1", rel) is None, rel
    held = memrepo.path / ".git" / "gitmem" / "held" / "cycle-1"
    assert (held / place / "big.bin").stat().st_size == LIMIT * 4
    assert (held / place / "nested" / INERT_GIT).is_dir()        # held, and inert (its .git renamed)
    # The human's ignore rules are back, and the tree is clean: the next cycle starts.
    assert memrepo.read(".gitignore") == file_at(memrepo.repo, "HEAD", ".gitignore")
    assert "*" not in (memrepo.path / ".git" / "info" / "exclude").read_text().split("\n")
    assert "core.excludesfile" not in _git(memrepo.path, "config", "--list", "--local").lower()
    assert _git(memrepo.path, "status", "--porcelain", "--untracked-files=all") == ""


def _run(tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, trick: str, sandbox: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", MODEL_KEY)
    _prepare(tmp_path, memrepo, trick, sandbox)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.out + result.err
    assert no_traceback(result.err)
    _assert_held(memrepo, trick)
    assert is_clean(memrepo), memrepo.repo.status()
    assert cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path).code == ExitCode.OK


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_ignore_rules_the_agent_writes_hide_nothing_with_the_box_off(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, trick: str) -> None:
    _run(tmp_path, memrepo, cli, monkeypatch, trick, "none")


needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces")


@needs_bwrap
@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_ignore_rules_the_agent_writes_hide_nothing_in_the_box(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, trick: str) -> None:
    _run(tmp_path, memrepo, cli, monkeypatch, trick, "bubblewrap")


@needs_bwrap
@pytest.mark.parametrize("trick", ["top-gitignore", "every-folder-gitignore"])
def test_ignore_rules_the_agent_writes_hide_nothing_in_the_box_of_an_unprivileged_user(git_env: None,
                                                                                      trick: str) -> None:
    """As root the box proves little about a runner: the same cycle as `nobody`, in a repository it owns."""
    with nobody_place("gitmem-tricks-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        _prepare(place, repo, trick, "bubblewrap", by_name=True)
        runs_nobodys_venv(repo, bin_dir)
        env = nobody_env(place, bin_dir, ANTHROPIC_API_KEY=MODEL_KEY)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json", env=env)
        assert done.returncode == ExitCode.OK, done.stdout + done.stderr
        assert no_traceback(done.stderr)
        _assert_held(repo, trick)


def test_a_failed_cycle_salvages_what_its_ignore_rules_hid_and_leaves_a_clean_tree(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The salvage branch takes the hidden files (masked), main gets none, and nothing stays behind."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", MODEL_KEY)
    body = _agent("top-gitignore") + "\nsys.exit(3)\n"
    command_agent(tmp_path, memrepo, body, pass_env=("ANTHROPIC_API_KEY",), write_memory=False)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.out + result.err
    for rel in PROTECTED:
        assert file_at(memrepo.repo, "HEAD", rel) is None, rel
    assert file_at(memrepo.repo, "gitmem/salvage/cycle-1", ".mcp.json") == PROTECTED[".mcp.json"]
    everything = _everything_ever_written(memrepo)
    assert MODEL_KEY not in everything and TOKEN not in everything
    assert is_clean(memrepo), memrepo.repo.status()
    assert not (memrepo.path / "nested").exists()


# -- odd ignore files, in process -------------------------------------------------------------------------------

def _hide_with(kind: str, root: Path, outside: Path) -> None:
    target = root / ".gitignore"
    target.unlink()
    if kind == "link":
        outside.write_text("*\n")
        target.symlink_to(outside)
    elif kind == "directory":
        target.mkdir()
        (target / "x").write_text("*\n")
    (root / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (root / "leak.txt").write_text(f"token {TOKEN}\n")


@pytest.mark.parametrize("kind", ["link", "directory"])
def test_an_ignore_file_swapped_for_a_link_or_a_folder_hides_nothing(memrepo: GitRepo, tmp_path: Path,
                                                                     kind: str) -> None:
    from tests.support.hostile import cycle

    outside = tmp_path / "outside-ignore"
    before = memrepo.read(".gitignore")
    report = cycle(memrepo, lambda root, memory, request: _hide_with(kind, root, outside))
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", ".mcp.json") is None
    assert file_at(memrepo.repo, report.proposal_branch or "HEAD", ".mcp.json") is not None
    assert TOKEN not in (file_at(memrepo.repo, "HEAD", "leak.txt") or "")
    assert "token " in (file_at(memrepo.repo, "HEAD", "leak.txt") or "")
    assert memrepo.read(".gitignore") == before and not (memrepo.path / ".gitignore").is_symlink()
    assert is_clean(memrepo)
    if kind == "link":
        assert outside.read_text() == "*\n"            # nothing written through the link


def test_a_deleted_ignore_file_does_not_bring_what_the_human_ignores(memrepo: GitRepo) -> None:
    """The human's `.env` rule holds for a `.env` the agent writes after deleting `.gitignore`."""
    from tests.support.hostile import cycle

    def act(root: Path, memory, request) -> None:
        (root / ".gitignore").unlink()
        (root / ".env").write_text("LOCAL=1\n")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", ".env") is None
    assert file_at(memrepo.repo, report.proposal_branch, ".env") is None
    assert file_at(memrepo.repo, report.proposal_branch, ".gitignore") is None       # the deletion, proposed
    assert memrepo.read(".gitignore") == file_at(memrepo.repo, "HEAD", ".gitignore")
    assert is_clean(memrepo)
