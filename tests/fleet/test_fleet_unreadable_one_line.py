"""GM931, an agent of the fleet that could not be read, is one line however many lines its error held: the error
quotes git's or a library's output, and a line break in it started a line no `path:line:` reader knows."""
from __future__ import annotations

from pathlib import Path

from gitmem.fleet.fleetfile import load_fleet
from gitmem.fleet.need import PUBLIC_ERROR, unreadable_diagnostics
from gitmem.fleet.read import unreadable_row


def test_an_error_of_several_lines_is_folded_onto_its_gm931_line(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: ok\n    repo: ok\n  - name: broken\n    repo: broken\n",
                                         encoding="utf-8")
    fleet = load_fleet(tmp_path / "fleet.yaml")
    error = "`git fetch` failed: fatal: the remote hung up\n\nPlease make sure you have the correct access rights\n" \
            "\tand the repository exists.\n"
    rows = [unreadable_row(fleet.agents[1], error)]
    assert unreadable_diagnostics(fleet, rows) == [
        f"{tmp_path / 'fleet.yaml'}:4: GM931 broken: `git fetch` failed: fatal: the remote hung up Please make sure "
        "you have the correct access rights and the repository exists."]
    public = unreadable_diagnostics(fleet, rows, public=True)
    assert public == [f"{tmp_path / 'fleet.yaml'}:4: GM931 broken: {PUBLIC_ERROR}"]
