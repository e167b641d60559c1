"""The close quotes the day's entries (Tasks, Results) into its own LOG entry. A secret-shaped token that reached
LOG past the hooks (a commit with --no-verify; `verify` flags that commit) is masked in what the close writes,
as in every other output (gitmem.secrets.scrub): the close used to copy it, refuse its own entry (GM903 at a line
of LOG that does not exist) and fail, and every later close failed the same way, since the cycle stayed
unreported."""
from __future__ import annotations

import pytest

from gitmem.secrets import MASK
from tests.support.world import World, at, d, last_entry

TOKEN = "ghp_" + "A1b2C3d4" * 5


def test_a_secret_in_a_cycles_entry_is_masked_in_the_close_and_the_close_runs(world: World) -> None:
    world.cycle(at(10, 9))
    entry = f"\n## 2026-11-10 10:00 UTC · cycle 2 · no-build\n- Task: deploy with {TOKEN}\n- Result: key {TOKEN}\n"
    world.git.commit_files({"LOG.md": world.read("LOG.md") + entry}, "gitmem: cycle 2 (past the hooks)")
    before = world.git.head()

    result = world.close(d(10), at(10, 23))

    assert result.status == "closed" and result.counts["no-build"] == 1
    written = world.read("LOG.md").split(entry, 1)[1] + world.read("NOW.md")
    assert TOKEN not in written and f"deploy with {MASK}" in (last_entry(world.read("LOG.md")).get("Done") or "")
    assert TOKEN not in world.git.repo.head.peel().message
    world.assert_valid(before)



@pytest.mark.parametrize("as_json", [False, True])
def test_the_close_command_prints_no_secret_of_a_day_it_quotes(world: World, cli,  # type: ignore[no-untyped-def]
                                                                as_json: bool) -> None:
    """What the close prints (text and --json): the problems it lists quote the Result, masked like the entry."""
    world.cycle(at(10, 9))
    entry = f"\n## 2026-11-10 10:00 UTC · cycle 2 · no-build\n- Task: deploy\n- Result: key {TOKEN}\n"
    world.git.commit_files({"LOG.md": world.read("LOG.md") + entry}, "gitmem: cycle 2 (past the hooks)")
    shown = cli(["close", "--no-llm", "--date", "2026-11-10", *(["--json"] if as_json else [])], cwd=world.git.path)
    assert shown.code == 0, shown.out + shown.err
    assert TOKEN not in shown.out + shown.err and f"key {MASK}" in shown.out
