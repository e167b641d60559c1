"""`fleet report` and `fleet pages` on disk: the fleet page's bytes once every page it brings is judged
(gitmem.fleet.target), each agent's own page beside it, and the pages an earlier report wrote for agents no longer
in the fleet removed. A page that cannot be written or removed is PageUnwritable, naming it: the command's one
refusal of writing a page (a link in the way stays FileRefused, exit 2)."""
from __future__ import annotations

from pathlib import Path

from gitmem.fleet.page import (
    AGENT_PAGES,
    agent_page_names,
    remove_pages,
    render_page,
    stale_agent_pages,
    write_agent_pages,
)
from gitmem.fleet.parallel import FleetView
from gitmem.fleet.target import refuse_replacing


class PageUnwritable(Exception):
    """The page at `target` could not be written or removed: `cause` says why."""

    def __init__(self, target: Path, cause: OSError) -> None:
        super().__init__(f"{target}: {cause}")
        self.target, self.cause = target, cause


def fleet_page(view: FleetView, target: Path, fleet_file: Path, *, public: bool) -> bytes:
    """The fleet page's bytes, once the agents' pages that go beside `target` (none when `public`) are judged:
    none may replace the fleet file, or a file a report never replaces. Nothing is written here."""
    if not public:
        refuse_replacing([target.parent / name for name in agent_page_names(view)], fleet_file)
    return render_page(view, public=public).encode("utf-8")


def agent_pages(view: FleetView, folder: Path) -> int:
    """The agents' own pages beside the fleet page (gitmem.fleet.page.write_agent_pages): how many."""
    try:
        return write_agent_pages(view, folder)
    except OSError as err:
        raise PageUnwritable(folder / AGENT_PAGES, err) from None


def remove_stale(view: FleetView, folder: Path) -> list[str]:
    """The pages an earlier report wrote beside the fleet page for agents no longer in the fleet, removed: they
    quote memory the fleet no longer shows, and whoever publishes the folder would publish them too."""
    stale = stale_agent_pages(folder, view.rows)
    try:
        remove_pages(folder, stale)
    except OSError as err:
        raise PageUnwritable(folder / stale[0], err) from None
    return stale
