"""Real Codex in the box as a scheduled cycle runs it: the runner's CODEX_HOME is not the box's (a fresh one
inside, as on a CI runner, with the provider given on Codex's command line), and the model writes memory through
shell commands or through the gitmem MCP server; as root and as `nobody`. Both paths end `built`.

Codex runs a shell command in a login shell (`bash -lc`), whose profile resets PATH, unless the project's
`.codex/config.toml` says `allow_login_shell = false`; that file is read only in a trusted project, and the
trust is kept in CODEX_HOME: in a fresh one, `--trust` on the recipe's command line is what makes the shell
find `gitmem`. The MCP server is started by Codex from the same file, on Codex's own PATH."""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmem.scaffold.codex_recipe import CODEX_CYCLE_COMMAND
from tests.e2e.test_codex import GITMEM, MCP_CALLS, SHELL_CALLS, assert_built
from tests.support import codex_cli as cx
from tests.support import fake_openai as fo
from tests.support.claude_cycle import commit_config, entries, make_project
from tests.support.nobody import NOBODY, bwrap_works, nobody_place, shared_tree

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")]


@pytest.fixture(scope="module")
def codex() -> Path:
    return cx.codex_or_skip()


def _cycle_is_built(codex: Path, root: Path, home: Path, calls: tuple[Any, ...]) -> None:
    """`gitmem cycle` run as a scheduled cycle with the recipe in the box, against the fake Responses API playing
    `calls`: it exits 0 and the model's memory writes are in the commit."""
    fake = fo.FakeResponsesAPI(cx.script(*calls))
    with fake.serve() as url:
        _scheduled(root, url)
        commit_config(root)
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=cx.codex_env(home, codex),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_built(root, json.loads(done.stdout), fake)


def _scheduled(root: Path, url: str) -> None:
    """The recipe's command with the provider on its command line (a runner has no CODEX_HOME of its own), in
    the box, the runner's CODEX_HOME not named in agent.sandbox.writable."""
    provider = (f'model_providers.fake={{name="fake", base_url="{url}", env_key="OPENAI_API_KEY", '
                'wire_api="responses", supports_websockets=false, request_max_retries=0, stream_max_retries=0}')
    argv = [*shlex.split(CODEX_CYCLE_COMMAND)[:-1], "-c", f'model="{cx.MODEL}"', "-c", 'model_provider="fake"',
            "-c", provider, "-"]
    config = root / "gitmem.yaml"
    text = config.read_text().replace("    mode: auto", "    mode: bubblewrap")
    assert f"  command: {CODEX_CYCLE_COMMAND}\n" in text
    config.write_text(text.replace(f"  command: {CODEX_CYCLE_COMMAND}\n",
                                   f"  command: {json.dumps(shlex.join(argv))}\n"))


@pytest.mark.parametrize("calls", [SHELL_CALLS, MCP_CALLS], ids=["shell", "mcp"])
def test_a_scheduled_codex_cycle_in_the_box_is_built(codex: Path, tmp_path: Path, git_env: None, calls) -> None:
    root, home = make_project(tmp_path, "codex")
    _cycle_is_built(codex, root, home, calls)
    assert "sandbox: bubblewrap" in (entries(root)[-1].get("Evidence") or "")


@pytest.mark.parametrize("calls", [SHELL_CALLS, MCP_CALLS], ids=["shell", "mcp"])
def test_a_scheduled_codex_cycle_in_the_box_is_built_for_an_unprivileged_user(codex: Path, git_env: None,
                                                                              calls) -> None:
    with nobody_place("gitmem-nobody-codex-") as (place, bin_dir):
        install = shared_tree(codex.parents[1], place / "cli")         # .../node_modules
        root, home = make_project(place, "codex")
        fake = fo.FakeResponsesAPI(cx.script(*calls))
        with fake.serve() as url:
            _scheduled(root, url)
            commit_config(root)
            state = place / "state"             # the cycle's backup bundles: nobody's, not the test's
            state.mkdir()
            for owned in (root, home, state):
                subprocess.run(["chown", "-R", "65534:65534", str(owned)], check=True)
            env = cx.codex_env(home, install / ".bin" / "codex")
            env.update(PATH=f"{bin_dir}:{env['PATH']}", XDG_STATE_HOME=str(state))
            done = subprocess.run([*NOBODY, str(bin_dir / "gitmem"), "cycle", "--json"], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert_built(root, json.loads(done.stdout), fake)
        assert (root / "LOG.md").stat().st_uid == 65534
        # Codex held a placeholder; the key proxy, served by the runner as `nobody`, gave the API the key.
        assert "model key: the agent holds a placeholder for OPENAI_API_KEY" in (entries(root)[-1].get("Evidence")
                                                                                or "")
        assert {headers.get("authorization") for headers in fake.headers} == {f"Bearer {cx.KEY}"}


def test_a_codex_login_shell_in_the_box_still_finds_gitmem(codex: Path, tmp_path: Path, git_env: None) -> None:
    """Without `allow_login_shell = false` (a project set up before it, or one Codex does not trust), Codex runs
    `bash -lc`, whose /etc/profile resets PATH on Debian: the box's own login profile puts the agent's PATH
    back, so `gitmem log add` is found and the cycle is built."""
    root, home = make_project(tmp_path, "codex")
    settings = root / ".codex" / "config.toml"
    settings.write_text(settings.read_text().replace("allow_login_shell = false\n", ""))
    _cycle_is_built(codex, root, home, SHELL_CALLS)
