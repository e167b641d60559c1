"""The meaning benchmark's command line (benchmarks/bench_recall_semantic.py): `--help` says how to run it and
builds nothing; an argument it does not know is refused."""
from __future__ import annotations

import pytest

from benchmarks import bench_recall_semantic


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def built(*_: object, **__: object) -> None:
        raise AssertionError("the benchmark started building its memories")

    for name in ("prepare", "floors", "check_set"):
        monkeypatch.setattr(bench_recall_semantic, name, built)


def test_help_prints_the_usage_and_every_report_and_exits_0_without_building(
        nothing_built: None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_recall_semantic.main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: bench_recall_semantic.py")
    assert all(flag in shown for flag in ("--coverage", "--floors", "--calibrate", "GITMEM_BENCH_SCALES"))


@pytest.mark.parametrize("argv", [["--bogus"], ["--coverage", "--floors"]])
def test_an_unknown_or_second_report_is_refused_with_exit_2_without_building(
        nothing_built: None, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_recall_semantic.main(argv)
    assert exited.value.code == 2
    assert "error:" in capsys.readouterr().err
