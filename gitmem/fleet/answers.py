"""The fleet commands' answers as data, the objects their --json prints: `fleet pending`, `fleet status` and
`fleet dispatch`. Each says the moment (`now`), whether an agent failed and which (`unreadable`, as the
GM931 lines say them), then its own content; a public answer leaves out what `gitmem.fleet.public` keeps from
the public."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any

from gitmem.fleet.dispatch import CatchUpPass
from gitmem.fleet.fleetfile import Fleet
from gitmem.fleet.need import fleet_notes, headline, unreadable_data
from gitmem.fleet.parallel import FleetView
from gitmem.fleet.public import public_row, public_step, waiting_counts


def pending_data(fleet: Fleet, view: FleetView, *, public: bool) -> dict[str, Any]:
    """`fleet pending --json`, an object as `fleet status --json` is: the moment, whether an agent failed and
    which (`unreadable`: each with git's error, which `public` leaves out), and the decisions (`public`:
    `waiting`, how many wait on each agent). It was the bare list, which could not say whose decisions are
    missing from it."""
    unreadable = unreadable_data(fleet, view.rows, public=public)
    found = {"waiting": waiting_counts(view.inbox)} if public else {"decisions": [asdict(d) for d in view.inbox]}
    return {"now": view.moment.isoformat(timespec="seconds"), "failed": view.failed, "unreadable": unreadable,
            **found}


def status_data(fleet: Fleet, view: FleetView, *, public: bool) -> dict[str, Any]:
    """`fleet status --json`: the moment, the agents that failed (`unreadable`, as `fleet pending --json` says
    them), the headline and notes, a row per agent."""
    agents = [asdict(public_row(row)) if public else asdict(row) for row in view.rows]
    return {"now": view.moment.isoformat(timespec="seconds"), "failed": view.failed,
            "unreadable": unreadable_data(fleet, view.rows, public=public),
            "headline": headline(view.rows), "notes": fleet_notes(view.rows), "agents": agents}


def dispatch_data(fleet: Fleet, view: FleetView, done: CatchUpPass, *, public: bool) -> dict[str, Any]:
    """`fleet dispatch --json`: the moment the fleet was read (what "overdue" is judged from, `now` as the other
    answers say it), whether it was a dry run, whether an agent could not be read or a call failed (`failed`, the
    exit code's reason), the agents that could not be read (`unreadable`, as `fleet status --json` says them),
    the calls made, a step per agent."""
    return {"now": view.moment.isoformat(timespec="seconds"), "dry_run": done.dry_run, "failed": done.failed,
            "unreadable": unreadable_data(fleet, view.rows, public=public), "calls": done.calls,
            "agents": [public_step(step) if public else asdict(step) for step in done.steps]}
