"""`gitmem.report.report_target`: where `gitmem report` puts the report (the command only writes it there)."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.report import report_target
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo


@pytest.mark.parametrize(("out", "fmt"), [("-", "html"), ("-", "summary"), (None, "summary")])
def test_stdout_for_a_dash_and_for_a_summary_by_default(memrepo: GitRepo, out: str | None, fmt: str) -> None:
    assert report_target(Workspace.at(memrepo.path), out, fmt) is None
    assert not (memrepo.path / ".git" / "gitmem" / "report.html").exists()


def test_an_html_page_goes_to_the_state_directory_by_default_never_the_work_tree(memrepo: GitRepo) -> None:
    target = report_target(Workspace.at(memrepo.path), None, "html")
    assert target == memrepo.path / ".git" / "gitmem" / "report.html" and target.parent.is_dir()


@pytest.mark.parametrize("fmt", ["html", "summary"])
def test_a_named_out_is_where_it_goes(memrepo: GitRepo, tmp_path: Path, fmt: str) -> None:
    assert report_target(Workspace.at(memrepo.path), str(tmp_path / "r.html"), fmt) == tmp_path / "r.html"


@pytest.mark.parametrize("name", ["NOW.md", "LOG.md", "gitmem.yaml", ".git/config", ".git/HEAD",
                                  ".git/hooks/pre-commit", ".git/gitmem/../config"])
def test_a_named_out_never_replaces_memory_the_config_or_git_itself(memrepo: GitRepo, cli, name: str) -> None:
    """`--out NOW.md` put the page in place of the memory file (its uncommitted lines lost), `--out .git/config`
    in place of the repository's config: no longer a repository. The state directory stays open to it."""
    target = memrepo.path / name
    before = target.read_bytes() if target.exists() else None
    done = cli(["report", "--out", name], cwd=memrepo.path)
    assert done.code == 2, done.out + done.err
    assert "gitmem: " in done.err and "choose another --out" in done.err
    assert (target.read_bytes() if target.exists() else None) == before
    assert cli(["status"], cwd=memrepo.path).code == 0


def test_a_named_out_in_the_state_directory_or_the_work_tree_is_written(memrepo: GitRepo, cli) -> None:
    for name in (".git/gitmem/mine.html", "site/report.html"):
        done = cli(["report", "--out", name], cwd=memrepo.path)
        assert done.code == 0, done.err
        assert (memrepo.path / name).read_text(encoding="utf-8").startswith("<!doctype html>")
