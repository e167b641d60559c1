"""Where the fleet's pages may be written: never in place of the fleet file, nor of what `gitmem report --out`
never replaces in the repository the page lands in (a memory file of any workspace, gitmem.yaml, a file of the
git directory: `gitmem.report.report_target` holds that rule).

`--out` is a path the human types, often inside a repository: the fleet repository (whose fleet.yaml the page
would replace), or an agent's checkout that fleet.yaml reads in place (whose uncommitted memory would be lost).
Every file a command writes, the fleet page and each agent's own page beside it, is judged before the first is
written, so a refusal writes nothing.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gitmem import gitio
from gitmem.config import Config, ConfigError
from gitmem.errors import GitmemError
from gitmem.fleet.page import AGENT_PAGES
from gitmem.workspace import Workspace

INDEX = "index.html"


def page_path(out: str) -> Path:
    """The file `--out` names: a folder (an existing one, or a path ending in a separator) holds INDEX, as the
    default `fleet-report/index.html` does. `-` is refused: the fleet page is a file with the agents' pages
    beside it, never standard output."""
    if out == "-":
        raise GitmemError("--out -: the fleet page is written to a file (each agent's page goes beside it); "
                          "name a file or a folder")
    target = Path(out)
    return target / INDEX if out.endswith(("/", os.sep)) or target.is_dir() else target


def fleet_page_target(out: str, fleet_file: Path, *, public: bool) -> Path:
    """The file `--out` names for the fleet page, refused (GitmemError, exit 2, nothing written) where it would
    replace the fleet file or what a report never replaces (`refuse_replacing`), or, `public`, lie beside agents'
    pages (`refuse_beside_agent_pages`)."""
    target = page_path(out)
    if public:
        refuse_beside_agent_pages(target)
    refuse_replacing([target], fleet_file)
    return target


def refuse_beside_agent_pages(target: Path) -> None:
    """GitmemError (exit 2) where agents' own pages lie beside a public page at `target`: they quote the agents'
    memory (a report without --public wrote them), and whoever publishes the folder would publish them with it."""
    beside = target.parent / AGENT_PAGES
    if beside.is_dir() and not beside.is_symlink() and any(beside.iterdir()):
        raise GitmemError(f"{beside} holds agents' own pages, which quote their memory (a report without --public "
                          "wrote them); a public page beside them would be published with them: remove that folder, "
                          "or write the public page to another --out")


def refuse_replacing(targets: Sequence[Path], fleet_file: Path) -> None:
    """GitmemError (exit 2) naming the first of `targets` that would replace the fleet file, or a file a report
    never replaces in the repository around it; nothing is written here. The targets share one folder's
    repository (the agents' pages are written beside the fleet page, never through a link)."""
    if not targets:
        return
    fleet = os.path.realpath(fleet_file)
    for target in targets:
        if os.path.realpath(target) == fleet:
            raise GitmemError(f"cannot write {target}: it is the fleet file, which a page never replaces; choose "
                              "another --out")
    around = _workspace_around(targets[0])
    if around is None:
        return
    from gitmem.report import report_target

    for target in targets:
        report_target(around, str(target), "html")


def _workspace_around(target: Path) -> Workspace | None:
    """The repository the nearest existing folder of `target` lies in, judged by its gitmem.yaml (by the default
    file names when that cannot be read: a broken config still names no other memory files); None outside any."""
    folder = Path(os.path.abspath(target)).parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        repo = gitio.open_repo(folder)
    except gitio.RepoError:
        return None
    try:
        return Workspace.for_repo(repo)
    except ConfigError:
        return Workspace.for_repo(repo, Config())
