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
