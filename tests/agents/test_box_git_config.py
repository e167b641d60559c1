"""The box shows the agent the repository's git config without its credentials (gitmem.agents.box_git_config): the
git directory is bound read-only, which keeps the agent from writing it, not from reading an `extraheader`, a
token in a remote's URL or a credential helper's password there. Run in the real bwrap, over real repositories."""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.agents import box_git_config
from gitmem.agents.sandbox import SandboxChoice, choose
from gitmem.config import parse_config
from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, with_command_backend
from tests.support.nobody import bwrap_works

needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")

TOKEN = "ghp_" + "Zq9x" * 9                      # a remote URL's password
HEADER_TOKEN = "hdr-" + "Kq2w" * 6               # what actions/checkout's extraheader carries, base64'd
HELPER_PASSWORD = "helper-" + "Pw7y" * 5         # a credential helper that echoes its stored password
SMTP_PASSWORD = "smtp-" + "Sm3t" * 5             # a key whose name says it holds one
USER_TOKEN = "glpat-" + "Ut5r" * 5               # a token standing as a URL's user
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{HEADER_TOKEN}".encode()).decode()
SECRETS = (TOKEN, HEADER_TOKEN, HEADER.split()[-1], HELPER_PASSWORD, SMTP_PASSWORD, USER_TOKEN)
# What the agent runs: every way it reads the config, then the git commands the box allows.
READS = ("cat .git/config; git config --list --show-origin; git remote get-url origin; "
         "git status --porcelain; git log --format=%s -1")


def _credentials(repo: GitRepo) -> bytes:
    """The credentials a human or CI leaves in a repository's config; the file's bytes afterwards."""
    for key, value in (("http.https://github.com/.extraheader", HEADER),
                       ("remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/acme/agent.git"),
                       ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
                       ("credential.helper", f"!f() {{ echo password={HELPER_PASSWORD}; }}; f"),
                       ("credential.https://example.com.username", "dana"),
                       ("sendemail.smtpPass", SMTP_PASSWORD),
                       (f"url.https://{USER_TOKEN}@gitlab.com/.insteadOf", "https://gitlab.com/")):
        git(repo.path, "config", key, value)
    return (repo.path / ".git" / "config").read_bytes()


def _boxed(repo: GitRepo, command: str) -> subprocess.CompletedProcess[str]:
    chosen = choose(parse_config(b"agent:\n  sandbox: bubblewrap\n"))
    assert isinstance(chosen, SandboxChoice) and chosen.mode == "bubblewrap"
    argv, env = chosen.wrap(["sh", "-c", command], {"PATH": os.environ["PATH"]}, workspace=repo.ws())
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, cwd=repo.path)


@needs_bwrap
def test_a_boxed_command_cannot_read_the_credentials_in_the_git_config(memrepo: GitRepo) -> None:
    before = _credentials(memrepo)
    done = _boxed(memrepo, READS)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert [secret for secret in SECRETS if secret in said] == []
    # git inside still works, with everything else the config says: the remote (without its user), the log
    assert "https://github.com/acme/agent.git\n" in done.stdout
    assert "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*" in done.stdout
    assert git(memrepo.path, "log", "--format=%s", "-1") in done.stdout
    # The human's file is never changed, and keeps every credential outside the box.
    assert (memrepo.path / ".git" / "config").read_bytes() == before
    assert TOKEN in git(memrepo.path, "remote", "get-url", "origin")


@needs_bwrap
def test_a_linked_work_trees_and_a_submodules_config_are_shown_without_credentials_too(memrepo: GitRepo,
                                                                                     tmp_path: Path) -> None:
    module = memrepo.path / ".git" / "modules" / "lib" / "sub"
    git(tmp_path, "init", "-q", "--bare", str(module))
    git(module, "config", "remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/acme/sub.git")
    git(memrepo.path, "config", "extensions.worktreeConfig", "true")
    git(memrepo.path, "config", "--worktree", "http.extraheader", HEADER)
    done = _boxed(memrepo, "cat .git/config .git/config.worktree .git/modules/lib/sub/config; git status --porcelain")
    assert done.returncode == 0, done.stderr
    assert [secret for secret in SECRETS if secret in done.stdout + done.stderr] == []
    assert "https://github.com/acme/sub.git" in done.stdout and "worktreeconfig = true" in done.stdout.lower()


def test_a_config_without_credentials_is_shown_as_it_is(memrepo: GitRepo) -> None:
    git(memrepo.path, "config", "remote.origin.url", "https://github.com/acme/agent.git")
    git(memrepo.path, "config", "core.sshCommand", "ssh -o BatchMode=yes")
    assert box_git_config.shown_copies(memrepo.ws().repo, lambda path: path.startswith(str(memrepo.path))) == ()


def test_the_copy_keeps_what_git_reads_there(memrepo: GitRepo) -> None:
    """Quotes, backslashes, tabs and dotted subsections come back as git read them; a key with no value is true."""
    odd = 'say "hi"\\there\tnow'
    config = memrepo.path / ".git" / "config"
    git(memrepo.path, "config", "alias.odd", odd)
    git(memrepo.path, "config", "branch.feature/x.y.remote", "origin")
    git(memrepo.path, "config", "sendemail.smtpPass", SMTP_PASSWORD)
    with config.open("a", encoding="utf-8") as handle:
        handle.write("[gitmem]\n\tflag\n")
    copy = box_git_config.sanitised(config)
    assert copy is not None and SMTP_PASSWORD not in copy
    shown = memrepo.path.parent / "shown-config"
    shown.write_text(copy, encoding="utf-8")
    listed = git(memrepo.path, "config", "--file", str(shown), "--list")
    assert f"alias.odd={odd}\n" in listed and "branch.feature/x.y.remote=origin\n" in listed
    assert "gitmem.flag\n" in listed and git(memrepo.path, "config", "--file", str(shown), "--bool",
                                             "gitmem.flag") == "true\n"


# -- every config file git reads for the repository, not the git directory's alone ---------------------------

INCLUDED_TOKEN = "incl-" + "In4c" * 6            # an extraheader in a file the repository's config includes
INCLUDE_IF_PASSWORD = "incif-" + "If8p" * 5      # a credential helper's password in an includeIf's file


@needs_bwrap
def test_the_files_a_config_includes_are_shown_without_credentials(memrepo: GitRepo) -> None:
    """`include.path` and `includeIf.*.path` name files git reads as config: one beside .git/config (a path
    relative to it), one in the work tree (git-ignored, as a local settings file is). The box showed them as
    they are, extraheader and helper password and all, where .git/config itself was stripped."""
    beside = memrepo.path / ".git" / "credentials.inc"
    beside.write_text(f'[http]\n\textraheader = "AUTHORIZATION: bearer {INCLUDED_TOKEN}"\n'
                      "[alias]\n\tshown = log -1\n", encoding="utf-8")
    local = memrepo.path / ".gitconfig.local"
    local.write_text(f'[credential]\n\thelper = "!f() {{ echo password={INCLUDE_IF_PASSWORD}; }}; f"\n'
                     "[alias]\n\tlocal = status --short\n", encoding="utf-8")
    (memrepo.path / ".git" / "info" / "exclude").write_text(".gitconfig.local\n", encoding="utf-8")
    git(memrepo.path, "config", "include.path", "credentials.inc")
    git(memrepo.path, "config", f"includeIf.gitdir:{memrepo.path}/.git.path", "../.gitconfig.local")
    before = {path: path.read_bytes() for path in (beside, local, memrepo.path / ".git" / "config")}
    done = _boxed(memrepo, "cat .git/credentials.inc .gitconfig.local; git config --list --show-origin; "
                           "git status --porcelain; git log --format=%s -1")
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert [secret for secret in (INCLUDED_TOKEN, INCLUDE_IF_PASSWORD) if secret in said] == []
    # git inside reads the rest of both files, and the tree is clean (the local file is excluded)
    assert "alias.shown=log -1" in done.stdout and "alias.local=status --short" in done.stdout
    assert git(memrepo.path, "log", "--format=%s", "-1") in done.stdout
    assert "??" not in done.stdout and " M " not in done.stdout
    assert {path: path.read_bytes() for path in before} == before


TRACKED_TOKEN = "trk-" + "Tr9k" * 6              # an extraheader in a committed file that .git/config includes
SHARED = f'[http]\n\textraheader = "AUTHORIZATION: bearer {TRACKED_TOKEN}"\n[alias]\n\tshared = log -1\n'


@needs_bwrap
def test_a_tracked_file_the_config_includes_is_stripped_and_git_inside_sees_what_git_outside_sees(
        memrepo: GitRepo) -> None:
    """Settings files committed in the project that .git/config includes, holding a credential: shown stripped,
    git in the box hashed the copies and reported them modified though nobody changed them. The box's index
    takes such a file as unchanged, so git inside says what git outside says: clean where the file is as
    committed (`.gitconfig.shared`), modified where the human changed it (`.gitconfig.team`); and a change made
    inside is seen as always."""
    shared, team = memrepo.path / ".gitconfig.shared", memrepo.path / ".gitconfig.team"
    memrepo.commit_files({".gitconfig.shared": SHARED, ".gitconfig.team": SHARED.replace("shared", "team")},
                         "shared git settings")
    git(memrepo.path, "config", "include.path", "../.gitconfig.shared")
    git(memrepo.path, "config", "--add", "include.path", "../.gitconfig.team")
    team.write_text(team.read_text(encoding="utf-8") + "[alias]\n\tmore = status\n", encoding="utf-8")
    outside = git(memrepo.path, "status", "--porcelain")
    before = {path: path.read_bytes() for path in (shared, team, memrepo.path / ".git" / "index")}
    done = _boxed(memrepo, "cat .gitconfig.shared .gitconfig.team; git config --list; echo =====; "
                           "git status --porcelain; echo =====; echo more >> NOW.md; git status --porcelain")
    assert done.returncode == 0, done.stderr
    shown, status, after = done.stdout.split("=====\n")
    assert TRACKED_TOKEN not in done.stdout + done.stderr
    assert "alias.shared=log -1\n" in shown and "alias.more=status\n" in shown
    assert status == outside == " M .gitconfig.team\n"
    assert after == " M .gitconfig.team\n M NOW.md\n"
    assert {path: path.read_bytes() for path in before} == before


SUBMODULE_TOKEN = "subm-" + "Sb6m" * 6           # a token in a submodule's remote URL


def _embedded_submodule(top: Path, tmp_path: Path, rel: str) -> Path:
    """A submodule `rel` of the repository `top` whose git directory is its own `.git` folder in the work tree
    (as `git submodule add` leaves a repository cloned there first), its remote's URL holding a token."""
    source = tmp_path / f"{rel.replace('/', '-')}-source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "code.txt").write_text("library code\n", encoding="utf-8")
    git(source, "add", "code.txt")
    git(source, "commit", "-q", "-m", "library")
    sub = top / rel
    git(top, "-c", "protocol.file.allow=always", "clone", "-q", str(source), str(sub))
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), rel)
    git(top, "commit", "-q", "-m", "a submodule")
    git(sub, "config", "remote.origin.url", f"https://x-access-token:{SUBMODULE_TOKEN}@github.com/acme/sub.git")
    assert (sub / ".git").is_dir()
    return sub


@needs_bwrap
def test_a_submodules_own_git_folder_in_the_tree_is_shown_without_credentials(memrepo: GitRepo,
                                                                               tmp_path: Path) -> None:
    sub = _embedded_submodule(memrepo.path, tmp_path, "lib/sub")
    before = (sub / ".git" / "config").read_bytes()
    done = _boxed(memrepo, "cat lib/sub/.git/config; git -C lib/sub remote get-url origin; "
                           "git status --porcelain; echo more >> lib/sub/code.txt; "
                           "git -C lib/sub -c user.name=Agent -c user.email=agent@example.com commit -qam boxed && "
                           "git -C lib/sub log --format=%s -1")
    assert done.returncode == 0, done.stderr
    assert SUBMODULE_TOKEN not in done.stdout + done.stderr
    # git inside reads the submodule's config (its remote, without the token) and commits there
    assert "https://github.com/acme/sub.git\n" in done.stdout and done.stdout.endswith("boxed\n")
    assert (sub / ".git" / "config").read_bytes() == before
    assert git(sub, "log", "--format=%s", "-1") == "boxed\n"


@needs_bwrap
def test_a_nested_submodules_own_git_folder_is_shown_without_credentials(memrepo: GitRepo, tmp_path: Path) -> None:
    """git status runs in every submodule, and in theirs: a submodule of a submodule, its `.git` folder in the
    work tree too, holds a config as the first does."""
    sub = _embedded_submodule(memrepo.path, tmp_path, "lib/sub")
    inner = _embedded_submodule(sub, tmp_path, "vendor/inner")
    git(memrepo.path, "add", "lib/sub")
    git(memrepo.path, "commit", "-q", "-m", "the submodule's submodule")
    before = (inner / ".git" / "config").read_bytes()
    done = _boxed(memrepo, "cat lib/sub/vendor/inner/.git/config; git -C lib/sub/vendor/inner remote get-url origin; "
                           "git status --porcelain")
    assert done.returncode == 0, done.stderr
    assert SUBMODULE_TOKEN not in done.stdout + done.stderr
    assert "https://github.com/acme/sub.git\n" in done.stdout
    assert (inner / ".git" / "config").read_bytes() == before


SYSTEM_TOKEN = "sys-" + "Sy5t" * 6               # an extraheader in the system's config
# Run in a mount namespace of its own whose /etc/gitconfig is the test's file: the box, and what it shows.
_BOXED_THERE = """import sys
from pathlib import Path
import pygit2
from tests.agents.test_box_git_config import _boxed
from tests.support.helpers import GitRepo
done = _boxed(GitRepo(Path(sys.argv[1]), pygit2.Repository(sys.argv[1])), sys.argv[2])
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or not os.path.isfile("/etc/gitconfig"),
                    reason="root stands a file of its own in for /etc/gitconfig, in a mount namespace of its own")
def test_the_systems_git_config_is_shown_without_credentials(memrepo: GitRepo, tmp_path: Path) -> None:
    """/etc/gitconfig is bound with /etc, and git inside reads it: a credential helper or an extraheader there
    (a CI image's, a company's) was the host's bytes inside the box."""
    system = tmp_path / "gitconfig"
    system.write_text(f'[http]\n\textraheader = "AUTHORIZATION: bearer {SYSTEM_TOKEN}"\n'
                      f'[credential]\n\thelper = "!echo password={SYSTEM_TOKEN}"\n[alias]\n\tsystemwide = log -1\n',
                      encoding="utf-8")
    before = system.read_bytes()
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           'mount --bind "$0" /etc/gitconfig && exec "$@"', str(system), sys.executable, "-c",
                           _BOXED_THERE, str(memrepo.path),
                           "cat /etc/gitconfig; git config --system --list; git status --porcelain; "
                           "git log --format=%s -1"],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert SYSTEM_TOKEN not in done.stdout + done.stderr
    assert "alias.systemwide=log -1\n" in done.stdout           # git inside reads the rest of it
    assert git(memrepo.path, "log", "--format=%s", "-1") in done.stdout
    assert system.read_bytes() == before


# A `#!/bin/sh` agent run by a boxed cycle: it reads every config file it can find into the folder it may write
# (agent.sandbox.writable), runs git there, and writes its memory.
SH_READER = """#!/bin/sh
cat > /dev/null
{ cat .git/config .git/credentials.inc lib/sub/.git/config /etc/gitconfig
  git config --list --show-origin; git -C lib/sub remote get-url origin; git status --porcelain
} > "$SEEN" 2>&1
gitmem log add --task "sh reader" --outcome built --result "read the git config"
gitmem now add --did "sh reader" --human nothing --next more
"""


@needs_bwrap
def test_a_boxed_sh_agent_reads_no_credential_of_any_config_git_reads(memrepo: GitRepo, tmp_path: Path, cli,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path a command agent takes: a cycle whose `#!/bin/sh` agent reads the included file and the
    submodule's own config from inside the box, and whose git there still works."""
    sub = _embedded_submodule(memrepo.path, tmp_path, "lib/sub")
    (memrepo.path / ".git" / "credentials.inc").write_text(
        f'[http]\n\textraheader = "AUTHORIZATION: bearer {INCLUDED_TOKEN}"\n', encoding="utf-8")
    git(memrepo.path, "config", "include.path", "credentials.inc")
    seen = tmp_path / "seen"
    seen.mkdir()
    script = tmp_path / "reader.sh"
    script.write_text(SH_READER, encoding="utf-8")
    script.chmod(0o755)
    text = with_command_backend(memrepo.read("gitmem.yaml"), str(script), sandbox="bubblewrap").replace(
        "    # writable: [~/.cache/my-agent]", f"    writable: [{seen}]").replace(
        "  pass_env:\n    - ANTHROPIC_API_KEY\n", "  pass_env:\n    - SEEN\n")
    memrepo.commit_files({"gitmem.yaml": text}, "a shell agent that reads")
    monkeypatch.setenv("SEEN", str(seen / "read.txt"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    before = [(path, path.read_bytes()) for path in (sub / ".git" / "config",
                                                      memrepo.path / ".git" / "credentials.inc")]
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    read = (seen / "read.txt").read_text(encoding="utf-8")
    assert [secret for secret in (INCLUDED_TOKEN, SUBMODULE_TOKEN) if secret in read] == [], read
    assert "https://github.com/acme/sub.git\n" in read and "include.path=credentials.inc" in read
    assert "Task: sh reader" in memrepo.read("LOG.md")
    assert [(path, path.read_bytes()) for path, _ in before] == before
