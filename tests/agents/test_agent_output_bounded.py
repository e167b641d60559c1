"""The runner reads an agent's output as it comes and keeps a bounded tail (gitmem.agents.output_tail): an agent
that prints 200 MB does not make a runner of 800 MB, and what Evidence quotes (its last words, its stderr's last
lines) is the end of what it printed, with a note of how much there was."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from gitmem.agents.output_tail import STDOUT_LIMIT, OutputTail
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent, evidence

MEGABYTES = 200


def _flood(megabytes: int, *, fail: bool = False) -> str:
    """An agent body that writes its memory, then prints `megabytes` MB to stdout and a tenth of that to stderr,
    each ending with a line that names it; then exits 3 when `fail`."""
    return (f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 't', '--outcome', 'built', '--result', 'r'], "
            "check=True, cwd=root, capture_output=True)\n"
            f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', '--next', 'n'], "
            "check=True, cwd=root, capture_output=True)\n"
            f"block = b'x' * 1023 + b'\\n'\nfor _ in range({megabytes} * 1024):\n"
            "    sys.stdout.buffer.write(block)\n"
            f"for _ in range({megabytes} * 102):\n"
            "    sys.stderr.buffer.write(block)\n"
            "sys.stdout.buffer.write(b'the last line of stdout\\n'); sys.stdout.flush()\n"
            "sys.stderr.buffer.write(b'the last line of stderr\\n'); sys.stderr.flush()\n"
            + ("sys.exit(3)\n" if fail else ""))


def _cycle_peak(repo: GitRepo) -> tuple[int, dict[str, object], int]:
    """Run `gitmem cycle --json` as a child process; its exit code, report, and peak RSS in KiB (wait4's)."""
    process = subprocess.Popen([str(GITMEM), "cycle", "--json"], cwd=repo.path, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, json.loads(out), usage.ru_maxrss


def test_an_agent_printing_200_mb_leaves_the_runner_bounded_and_its_tail_in_evidence(tmp_path: Path,
                                                                                       memrepo: GitRepo) -> None:
    command_agent(tmp_path, memrepo, _flood(1), write_memory=False)
    code, _, small = _cycle_peak(memrepo)
    assert code == ExitCode.OK
    command_agent(tmp_path, memrepo, _flood(MEGABYTES), write_memory=False)
    code, report, peak = _cycle_peak(memrepo)
    assert code == ExitCode.OK, report
    # The same runner with 1 MB of output: 200 MB more output may cost the tails (4 MB and 256 KB), not 200 MB.
    print(f"peak RSS of the runner: {small / 1024:.0f} MiB with 1 MB of output, {peak / 1024:.0f} MiB with "
          f"{MEGABYTES} MB")
    assert peak - small < 48 * 1024, (small, peak)
    said = evidence(memrepo)
    assert "the last line of stdout" in said and "the last line of stderr" in said
    assert f"its output was {MEGABYTES * 1024 * 1024 + 24:,} bytes; the runner kept only the last" in said


def test_a_failing_flood_names_its_last_stderr_line(tmp_path: Path, memrepo: GitRepo) -> None:
    command_agent(tmp_path, memrepo, _flood(8, fail=True), write_memory=False)
    code, report, _ = _cycle_peak(memrepo)
    assert code == ExitCode.SALVAGED
    error = str(report["error"])
    assert "exited with code 3" in error and "the last line of stderr" in error
    assert "no-build" in memrepo.read("LOG.md").rsplit("## ", 1)[-1]


def test_a_tail_keeps_the_last_bytes_from_a_whole_line() -> None:
    tail = OutputTail(16)
    for n in range(100):
        tail.feed(f"line {n}\n".encode())
    assert tail.total == sum(len(f"line {n}\n") for n in range(100)) and tail.dropped == tail.total - 16
    assert tail.text() == "line 98\nline 99\n"
    whole = OutputTail(STDOUT_LIMIT)
    whole.feed(b"{\"a\": 1}\n\xff")
    assert whole.dropped == 0 and whole.text() == "{\"a\": 1}\n\ufffd" and whole.note("output") == ""
