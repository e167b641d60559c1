"""The real agent CLIs run a scheduled `gitmem cycle` through the runner's key proxy (gitmem.agents.key_stand_in):
Claude Code and Codex in the bubblewrap box, Gemini CLI as a plain process (its auth choice lives in the
human's HOME, which the box never shows). Each one's loopback fake of its API receives the real key while the
CLI holds a placeholder; the model has the CLI run a script that dumps every environment and command line it can
see as base32, UTF-32 and `xxd` into files the cycle commits and into the tool output the model reads, and none
of them holds the key in any encoding. Skipped, loudly, only where npm cannot install a CLI or bwrap cannot
make namespaces."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmem.scaffold.codex_recipe import CODEX_CYCLE_COMMAND
from gitmem.sessions.protocol import claude_cycle_command
from tests.agents.test_key_stand_in import decoded, holds
from tests.e2e.test_codex import GITMEM, SHELL_CALLS, assert_built
from tests.e2e.test_codex_box_paths import _scheduled
from tests.support import claude_code as cc
from tests.support import codex_cli as cx
from tests.support import fake_openai as fo
from tests.support import gemini_cli as gc
from tests.support.claude_cycle import (
    commit_config,
    entries,
    make_project,
    pass_env,
    run_cycle,
    tool_script,
    use_command,
)
from tests.support.gitcli import git
from tests.support.nobody import bwrap_works

pytestmark = [pytest.mark.slow]
needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")
# Run by the model through the CLI's shell tool: everything the agent can see, in three encodings, into files
# the cycle commits, and (base32, xxd) into the tool output the model reads. The raw dump is a temporary file
# of its own (run as a plain process, the agent's /tmp is the machine's, shared by parallel tests).
DUMP_SH = r"""all=$(mktemp)
( env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f"; echo; done ) > "$all" 2>/dev/null
xxd "$all" > env.xxd
python3 -c 'import base64, sys; d = open(sys.argv[1], "rb").read()
open("env.b85", "wb").write(base64.b85encode(d))
open("env.utf32", "wb").write(d.decode("utf-8", "replace").encode("utf-32"))' "$all"
base32 -w0 "$all" | head -c 4000
xxd "$all" | head -n 60
rm -f "$all"
"""
DUMPS = ("env.b85", "env.utf32", "env.xxd")
LOG_ADD = 'gitmem log add --task "dump" --outcome built --result "dumped" --evidence "sh dump.sh"'


def plant_dump(root: Path) -> None:
    (root / "dump.sh").write_text(DUMP_SH, encoding="utf-8")
    git(root, "add", "dump.sh")


def assert_no_key_anywhere(root: Path, key: str, *texts: str) -> None:
    dumps = {name: (root / name).read_bytes() for name in DUMPS}
    assert all(dumps.values()), "the agent wrote its dumps"
    assert b"gitmem-placeholder-" in decoded("env.b85", dumps["env.b85"]), "the CLI held the placeholder"
    found = {name: holds(decoded(name, data), key) + holds(data, key) for name, data in dumps.items()}
    found["said"] = holds("\n".join(texts).encode(), key)
    blobs = git(root, "rev-list", "--all", "--objects").split()
    found["commits"] = holds(b"".join(subprocess.run(["git", "cat-file", "-p", name], cwd=root, capture_output=True)
                                      .stdout for name in blobs if len(name) == 40), key)
    assert not any(found.values()), found
    assert git(root, "ls-files", *DUMPS).split() == list(DUMPS), "the dumps were committed"


@needs_bwrap
def test_claude_code_in_the_box_holds_a_placeholder_and_the_api_gets_the_key(tmp_path: Path, git_env: None) -> None:
    claude = cc.claude_or_skip()
    root, home = make_project(tmp_path)
    plant_dump(root)
    allowed = claude_cycle_command().replace('--allowedTools "', '--allowedTools "Bash(sh dump.sh:*),')
    use_command(root, allowed, sandbox="bubblewrap")
    pass_env(root, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "CI")
    calls = ({"name": "Bash", "input": {"command": "sh dump.sh", "description": "dump"}},
             {"name": "Bash", "input": {"command": LOG_ADD, "description": "log"}})
    report, (fake, stderr) = run_cycle(root, home, claude, tool_script(*calls))
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, stderr)
    key = cc.claude_env(home, "")["ANTHROPIC_API_KEY"]
    assert fake.headers and {h.get("x-api-key") for h in fake.headers} == {key}, "every request carried the key"
    assert "model key: the agent holds a placeholder for ANTHROPIC_API_KEY" in stderr
    results = [text for body in fake.requests for text in cc.tool_results(body)]
    assert any("0000" in text for text in results), "the model read the dump"
    assert_no_key_anywhere(root, key, json.dumps(fake.requests), stderr, json.dumps(report))
    assert "model key: the agent holds a placeholder" in (entries(root)[-1].get("Evidence") or "")


@needs_bwrap
def test_codex_in_the_box_holds_a_placeholder_and_the_api_gets_the_key(tmp_path: Path, git_env: None) -> None:
    codex = cx.codex_or_skip()
    root, home = make_project(tmp_path, "codex")
    plant_dump(root)
    fake = fo.FakeResponsesAPI(cx.script(("exec_command", {"cmd": "sh dump.sh"}), ("exec_command", {"cmd": LOG_ADD})))
    with fake.serve() as url:
        _scheduled(root, url)
        commit_config(root)
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=cx.codex_env(home, codex),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, done.stderr)
    assert fake.headers and {h.get("authorization") for h in fake.headers} == {f"Bearer {cx.KEY}"}
    assert "model key: the agent holds a placeholder for OPENAI_API_KEY" in done.stderr
    assert any("0000" in text for body in fake.requests for text in fo.outputs(body).values())
    assert_no_key_anywhere(root, cx.KEY, json.dumps(fake.requests), done.stderr, done.stdout)


@needs_bwrap
@needs_bwrap
def test_codex_with_its_built_in_provider_goes_through_the_proxy_too(tmp_path: Path, git_env: None) -> None:
    """The recipe with no provider of its own: Codex's `openai_base_url` (here the human's, the fake) is the
    upstream, the runner's `-c openai_base_url` after it points Codex at the proxy, and Codex's WebSocket
    attempt, refused there, falls back to streaming over HTTP."""
    codex = cx.codex_or_skip()
    root, home = make_project(tmp_path, "codex")
    fake = fo.FakeResponsesAPI(cx.script(*SHELL_CALLS))
    with fake.serve() as url:
        argv = [*shlex.split(CODEX_CYCLE_COMMAND)[:-1], "-c", f'model="{cx.MODEL}"', "-c",
                f'openai_base_url="{url}"', "-"]
        config = root / "gitmem.yaml"
        text = config.read_text().replace("    mode: auto", "    mode: bubblewrap")
        config.write_text(text.replace(f"  command: {CODEX_CYCLE_COMMAND}\n",
                                       f"  command: {json.dumps(shlex.join(argv))}\n"))
        commit_config(root)
        # Codex's own provider reads CODEX_API_KEY in `codex exec`; the Action sets both, as here.
        env = {**cx.codex_env(home, codex), "CODEX_API_KEY": cx.KEY}
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr
    assert_built(root, json.loads(done.stdout), fake)
    assert {h.get("authorization") for h in fake.headers} == {f"Bearer {cx.KEY}"}
    said = entries(root)[-1].get("Evidence") or ""
    assert "model key: the agent holds a placeholder for OPENAI_API_KEY, CODEX_API_KEY" in said, said


def test_gemini_cli_in_the_box_holds_a_placeholder_and_the_api_gets_the_key(tmp_path: Path, git_env: None) -> None:
    """In the box the CLI's HOME is fresh: the API-key auth is chosen in the project's own settings."""
    gemini = gc.gemini_or_skip()
    root, home = make_project(tmp_path, "gemini")
    plant_dump(root)
    settings = root / ".gemini" / "settings.json"
    chosen = json.loads(settings.read_text())
    chosen.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
    settings.write_text(json.dumps(chosen))
    done, fake, key = _gemini_cycle(gemini, root, home, "bubblewrap")
    assert "model key: the agent holds a placeholder for GEMINI_API_KEY" in done.stderr
    assert "0000" in json.dumps([gc.responses(body) for _, body in fake.requests]), "the model read the dump"
    assert_no_key_anywhere(root, key, json.dumps(fake.requests), done.stderr, done.stdout)


def _gemini_cycle(gemini: Path, root: Path, home: Path,
                  mode: str) -> tuple[subprocess.CompletedProcess[str], gc.FakeGeminiAPI, str]:
    """A built cycle of Gemini CLI running the dump, then `gitmem log add`; (the run, the fake, the key)."""
    calls = [("run_shell_command", {"command": "sh dump.sh"}), ("run_shell_command", {"command": LOG_ADD})]

    def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
        step = len(gc.responses(body))
        if step < len(calls):
            return [{"functionCall": {"name": calls[step][0], "args": calls[step][1]}}]
        return [{"text": "done"}]

    command = f"{gemini} --output-format json --yolo -p 'Do the cycle described on stdin.'"
    use_command(root, command, sandbox=mode)
    pass_env(root, "GEMINI_API_KEY", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_TELEMETRY_ENABLED", "NO_BROWSER", "CI")
    commit_config(root)
    fake = gc.FakeGeminiAPI(respond)
    with fake.serve() as url:
        env = gc.gemini_env(gc.gemini_home(home), url, f"{GITMEM.parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin")
        done = subprocess.run([str(GITMEM), "cycle", "--json"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["outcome"], report["task"]) == ("built", "dump"), (report, done.stderr[-3000:])
    key = env["GEMINI_API_KEY"]
    assert fake.headers and {h.get("x-goog-api-key") for h in fake.headers} == {key}, "the API got the key"
    return done, fake, key


def test_gemini_cli_as_a_plain_process_holds_a_placeholder_too(tmp_path: Path, git_env: None) -> None:
    gemini = gc.gemini_or_skip()
    root, home = make_project(tmp_path, "gemini")
    plant_dump(root)
    done, fake, key = _gemini_cycle(gemini, root, home, "none")
    assert "model key: the agent holds a placeholder for GEMINI_API_KEY" in done.stderr
    # As a plain process the agent could read the runner's environment (/proc/PPID/environ): the start says so,
    # and the dump walks /proc, so only what the CLI itself holds is checked here.
    assert "without the box" in done.stderr
    assert holds(json.dumps(env_of_cli(root)).encode(), key) == []


def env_of_cli(root: Path) -> str:
    """The first section of the dump: `env` as the CLI's shell saw it."""
    return decoded("env.b85", (root / "env.b85").read_bytes()).split(b"\0", 1)[0].decode("utf-8", "replace")
