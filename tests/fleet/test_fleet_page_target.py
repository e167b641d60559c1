"""Where `gitmem fleet report` and `gitmem fleet pages` write: `--out` as a human types it. A page never replaces
the fleet file, an agent's memory (its uncommitted lines would be lost), gitmem.yaml or a file of a git directory,
and a refusal writes nothing at all; `-` and a folder mean what they say. The fleet file itself is named as given
when it is not a regular file."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import make_repo

UNCOMMITTED = "\n## the human's uncommitted line\n"


@pytest.fixture
def fleet_root(tmp_path: Path, git_env: None, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fleet repository holding fleet.yaml, and one agent beside it read in place, with a LOG line the human
    has not committed yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make_repo(tmp_path / "fleet", template=False, commit=False).path
    agent = make_repo(root / "agent").path
    with (agent / "LOG.md").open("a", encoding="utf-8") as log:
        log.write(UNCOMMITTED)
    (root / "fleet.yaml").write_text("pages: public\nagents:\n  - name: agent\n    repo: agent\n", encoding="utf-8")
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and ".git/objects" not in str(path) and "/cache/" not in str(path)}


@pytest.mark.parametrize("out", ["agent/LOG.md", "agent/gitmem.yaml", "fleet.yaml", "agent/.git/config",
                                 ".git/HEAD"])
@pytest.mark.parametrize("command", [["fleet", "report"], ["fleet", "report", "--public"], ["fleet", "pages"]])
def test_a_fleet_page_never_replaces_memory_the_fleet_file_or_git_and_a_refusal_writes_nothing(
        fleet_root: Path, cli, command: list[str], out: str) -> None:
    before = _snapshot(fleet_root)
    done = cli([*command, "--out", out], cwd=fleet_root)
    assert done.code == 2, done.out + done.err
    assert f"cannot write {out}: it is " in done.err and "choose another --out" in done.err
    assert _snapshot(fleet_root) == before                       # no page, no agents/ folder, nothing replaced
    assert (fleet_root / "agent" / "LOG.md").read_text(encoding="utf-8").endswith(UNCOMMITTED)


def test_out_dash_is_refused_and_a_folder_gets_its_index_page(fleet_root: Path, cli) -> None:
    dash = cli(["fleet", "report", "--out", "-"], cwd=fleet_root)
    assert dash.code == 2 and "--out -: the fleet page is written to a file" in dash.err
    assert not (fleet_root / "-").exists()

    folder = cli(["fleet", "report", "--out", "site/"], cwd=fleet_root)
    assert folder.code == 0, folder.err
    assert (fleet_root / "site" / "index.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    assert (fleet_root / "site" / "agents" / "agent.html").is_file()
    (fleet_root / "public").mkdir()
    existing = cli(["fleet", "pages", "--out", "public"], cwd=fleet_root)
    assert existing.code == 0 and "wrote public/index.html" in existing.out
    assert (fleet_root / "public" / "index.html").is_file()


def test_a_fleet_file_that_is_a_folder_or_a_link_is_named_as_given_with_the_fix_for_a_fleet_file(
        fleet_root: Path, tmp_path: Path, cli) -> None:
    (fleet_root / "linked.yaml").symlink_to("fleet.yaml")
    (tmp_path / "folder").mkdir()
    folder = str(tmp_path / "folder")
    for given, said in ((folder, f"{folder}:1: GM930 {folder} is a directory, not a fleet file: pass --fleet "
                                 f"{folder}/fleet.yaml (or wherever its fleet file is)"),
                        ("linked.yaml", "linked.yaml:1: GM930 linked.yaml is a symbolic link; a fleet file is read "
                                        "only as a regular file, never through a link: pass --fleet with the file "
                                        "itself (--fleet fleet.yaml)")):
        done = cli(["fleet", "status", "--fleet", given], cwd=fleet_root)
        assert done.code == 2
        assert done.err.strip() == f"gitmem: {said}"
