"""The cyclic garbage collector around a CLI call (`gitmem.cli.Collector`): off while click and gitmem import,
on with a larger youngest generation for a command that parses memory, and as it was once the call returns."""
from __future__ import annotations

import gc

import pytest

from gitmem.cli import SHORT_LIVED, YOUNG_THRESHOLD, Collector


@pytest.fixture
def collector_as_python_leaves_it():
    before, on = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*before)
    (gc.enable if on else gc.disable)()


@pytest.mark.usefixtures("collector_as_python_leaves_it")
def test_a_command_that_parses_memory_collects_young_objects_less_often_and_the_call_leaves_it_as_it_was() -> None:
    with Collector() as collector:
        assert not gc.isenabled()
        collector.chosen("close")
        assert gc.isenabled() and gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.isenabled() and gc.get_threshold() == (700, 10, 10)


@pytest.mark.usefixtures("collector_as_python_leaves_it")
def test_a_short_lived_command_runs_without_the_collector() -> None:
    with Collector() as collector:
        collector.chosen(next(iter(SHORT_LIVED)))
        assert not gc.isenabled() and gc.get_threshold() == (700, 10, 10)
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_as_python_leaves_it")
def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    with Collector() as collector:
        collector.chosen("cycle")
        assert not gc.isenabled()
    assert not gc.isenabled() and gc.get_threshold() == (700, 10, 10)


@pytest.mark.usefixtures("collector_as_python_leaves_it")
def test_a_call_that_ends_the_process_leaves_the_collector_off_for_the_exit() -> None:
    with Collector(ends_process=True) as collector:
        collector.chosen("close")
        assert gc.isenabled()
    assert not gc.isenabled() and gc.get_threshold() == (700, 10, 10)


def test_the_gitmem_entry_point_leaves_the_collector_off_when_its_command_returns() -> None:
    """So the process exits without a last pass over what the command kept."""
    import subprocess
    import sys

    probe = ("import gc, sys\n"
             "from gitmem.__main__ import start\n"
             "sys.argv = ['gitmem', '--version']\n"
             "start()\n"
             "print(gc.isenabled(), gc.get_threshold()[0])\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[-2] == "False 700", done.stdout
