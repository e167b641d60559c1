"""`trust.signed_answers`: an answer counts only in a commit SSH-signed by a key in `trust.signing_keys`
(GM210, rules version 3). Real keys from ssh-keygen, real signed commits from git (gpg.format = ssh)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gitmem.checks.check_and_verify import verify_range
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend, built, clone, config_of, origin_and_clone
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import AGENT, DANA, HUMAN, GitRepo

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")


def _key(tmp_path: Path, name: str) -> tuple[Path, str]:
    key = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key, (tmp_path / f"{name}.pub").read_text().strip()


def _trusting(repo: GitRepo, keys: list[str], *, on: bool) -> None:
    text = repo.read("gitmem.yaml").replace("rules_version: 2", "rules_version: 3")
    listing = "".join(f"    - {key}\n" for key in keys)
    text += f"trust:\n  signed_answers: {'true' if on else 'false'}\n  signing_keys:\n{listing}"
    repo.commit_files({"gitmem.yaml": text}, "trust the human's key")


def _ask(repo: GitRepo) -> str:
    memory = MemoryWriter(Workspace.at(repo.path, config_of(repo)), author_email=AGENT[1])
    memory.ask_decision(title="Which license?", recommendation="MIT", cycle=1)
    repo.stage("DECISIONS.md")
    repo.commit("ask D-0001", author=AGENT)
    return repo.head()


def _answer(repo: GitRepo, tmp_path: Path, key: Path | None, extra: dict[str, str] | None = None) -> None:
    """D-0001 answered by the human, committed by git, signed with `key` (SSH) when given."""
    memory = MemoryWriter(Workspace.at(repo.path, config_of(repo)), author_email=HUMAN[1])
    memory.answer_decision("D-0001", answer="MIT it is", name=HUMAN[0], email=HUMAN[1])
    for rel, text in (extra or {}).items():
        repo.write(rel, text)
    signing = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "-c",
               f"gpg.ssh.allowedSignersFile={tmp_path / 'allowed'}"] if key else []
    git(repo.path, "add", "-A")
    run_git(repo.path, *signing, "commit", "-q", *(["-S"] if key else []), "-m", "answer D-0001",
            env=isolated_env(who=HUMAN))


def _gm210(repo: GitRepo, base: str) -> list[str]:
    found = verify_range(repo.ws(), base, "HEAD").violations
    return [v.message for v in found if v.code == "GM210"]


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    found = {name: _key(tmp_path, name) for name in ("human", "agent")}
    (tmp_path / "allowed").write_text(f"{HUMAN[1]} {found['human'][1]}\n")
    return found


def test_an_unsigned_answer_is_refused_when_the_setting_is_on(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=True)
    base = _ask(memrepo)
    _answer(memrepo, tmp_path, None)
    found = _gm210(memrepo, base)
    assert len(found) == 1 and "D-0001" in found[0] and "not signed" in found[0]


def test_an_unsigned_answer_is_accepted_when_the_setting_is_off(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=False)
    base = _ask(memrepo)
    _answer(memrepo, tmp_path, None)
    assert _gm210(memrepo, base) == []
    assert verify_range(memrepo.ws(), base, "HEAD").violations == []


def test_an_answer_signed_by_a_listed_key_is_accepted(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=True)
    base = _ask(memrepo)
    _answer(memrepo, tmp_path, keys["human"][0])
    allowed = f"gpg.ssh.allowedSignersFile={tmp_path / 'allowed'}"
    verified = run_git(memrepo.path, "-c", "gpg.format=ssh", "-c", allowed, "verify-commit", "HEAD", check=False)
    assert verified.returncode == 0, verified.stderr                  # git itself agrees it is the human's key
    assert _gm210(memrepo, base) == []


def test_an_answer_signed_by_another_key_is_refused(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=True)
    base = _ask(memrepo)
    _answer(memrepo, tmp_path, keys["agent"][0])
    assert ["not in trust.signing_keys" in message for message in _gm210(memrepo, base)] == [True]


def test_a_key_added_in_the_answering_commit_counts_for_nothing(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=True)
    base = _ask(memrepo)
    text = memrepo.read("gitmem.yaml").replace(keys["human"][1], keys["agent"][1])
    _answer(memrepo, tmp_path, keys["agent"][0], extra={"gitmem.yaml": text})
    assert len(_gm210(memrepo, base)) == 1


def test_switching_the_setting_off_in_the_answering_commit_does_not_help(memrepo: GitRepo, tmp_path: Path,
                                                                        keys) -> None:
    _trusting(memrepo, [keys["human"][1]], on=True)
    base = _ask(memrepo)
    text = memrepo.read("gitmem.yaml").replace("signed_answers: true", "signed_answers: false")
    _answer(memrepo, tmp_path, None, extra={"gitmem.yaml": text})
    assert len(_gm210(memrepo, base)) == 1


def test_a_cycle_does_not_build_on_an_unsigned_answer_upstream(memrepo: GitRepo, tmp_path: Path, keys) -> None:
    """Whoever pushed it (the agent writing the remote, or a human who did not sign): exit 5, nothing pushed."""
    _trusting(memrepo, [keys["human"][1]], on=True)
    _ask(memrepo)
    origin = origin_and_clone(tmp_path, memrepo)
    other = clone(origin, tmp_path / "other", DANA)
    _answer(other, tmp_path, None)
    git(other.path, "push", "-q", "origin", "main")
    pushed = git(origin, "rev-parse", "main").strip()
    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.REWRITTEN and not report.pushed
    assert git(origin, "rev-parse", "main").strip() == pushed
    assert any("GM210" in message for message in report.messages)
