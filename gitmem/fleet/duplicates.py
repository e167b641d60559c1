"""Each agent once in a fleet file: one rule (GM932) for the two ways an entry can repeat another.

- The same name, ignoring case: each name is a file name (agents/NAME.html), and on macOS and Windows `Writer`
  and `writer` are one file, so one agent's page would stand behind the other's link.
- The same repository, branch and workspace, however spelt (`gitmem.fleet.place`: a path and a `file://` URL of
  one folder, a branch named and the HEAD it is, two workspace names of one memory folder): its decisions would
  show twice in the inbox and its spending count twice against the fleet's budget. An entry without
  `workspace:` reads every workspace, so it overlaps any entry of its repository and branch. What cannot be
  known offline (a remote's default branch) is never refused.

The refusal names the first entry's line too: in a fleet of a hundred, `agents[57]` is not where an editor goes.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from gitmem import codes
from gitmem.config import refused
from gitmem.fleet.place import Place


class ListedAgent(Protocol):
    """What is judged of an entry of fleet.yaml (gitmem.fleet.fleetfile.AgentEntry, which calls this module)."""

    @property
    def name(self) -> str: ...
    @property
    def repo(self) -> str: ...
    @property
    def workspace(self) -> str | None: ...
    @property
    def line(self) -> int: ...
    def place(self, base: Path) -> Place: ...


def refuse_twice(agents: Sequence[ListedAgent], *, base: Path, shown: str) -> None:
    """Raise GM932 (a ConfigError) at the first entry that repeats an earlier one's name or place; `base` is the
    directory local repos are relative to, `shown` the fleet file as the diagnostic names it."""
    names: dict[str, int] = {}
    places: dict[tuple[object, ...], list[tuple[int, Place]]] = {}
    for index, entry in enumerate(agents):
        first = names.setdefault(entry.name.casefold(), index)
        if first != index:
            other = agents[first].name
            differs = (f" ({other!r}, which differs only in case: agents' pages are files, and some file systems "
                       "ignore case)") if other != entry.name else ""
            raise _refused(agents, index, shown, f"agents[{index}].name: {entry.name!r} is also the name of "
                           f"agents[{first}]{_at(agents[first], ' (line {})')}{differs}; names are unique")
        place = entry.place(base)
        readers = places.setdefault(place.repository, [])
        # The branch and the workspaces' folders are read only here, for a repository another entry reads too.
        overlapping = next((n for n, other in readers if other.branch == place.branch
                            and place.one_memory(agents[n].workspace, entry.workspace)), None)
        if overlapping is not None:
            earlier = agents[overlapping]
            first_at = f"agents[{overlapping}] ({earlier.name}{_at(earlier, ', line {}')})"
            raise _refused(agents, index, shown, f"agents[{index}] ({entry.name}): {_what(earlier, entry)} as "
                           f"{first_at}{_spelt(earlier, entry)}: its decisions would show twice in the inbox and "
                           "its spending count twice against the budget; keep one entry, or give each its own "
                           "workspace")
        readers.append((index, place))


def _what(first: ListedAgent, entry: ListedAgent) -> str:
    """What the two entries both read, in words."""
    shared = entry.workspace or first.workspace
    if entry.workspace and first.workspace and entry.workspace != first.workspace:
        return (f"reads the same repository and memory folder (workspace {entry.workspace!r} reaches "
                f"{first.workspace!r}'s)")
    workspace = f"workspace {shared!r}" if shared else "every workspace"
    return f"reads the same repository and {workspace}"


def _spelt(first: ListedAgent, entry: ListedAgent) -> str:
    """The two spellings, when they differ (`./a` and `a/`, a link): else the human looks for the same text."""
    return "" if first.repo == entry.repo else f", {entry.repo!r} being {first.repo!r}"


def _at(entry: ListedAgent, form: str) -> str:
    """`form` filled with the entry's line, or nothing where its line is not known."""
    return form.format(entry.line) if entry.line else ""


def _refused(agents: Sequence[ListedAgent], index: int, shown: str, text: str) -> Exception:
    return refused(codes.FLEET_AGENT_TWICE, shown + _at(agents[index], ":{}"), text)
