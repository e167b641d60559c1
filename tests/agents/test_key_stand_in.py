"""The agent never holds the model's key (gitmem.agents.key_stand_in): a command agent run by the real cycle
runner, in the box and as a plain process, dumps its whole environment (and, in the box, every process's
environ and command line it can see) as base32, UTF-32 and an `xxd` dump into files it leaves for the commit, on
its stdout and stderr, and its own memory into a directory it may write; then it calls the model through the
endpoint it was given. The loopback upstream receives the real key; no file, commit, output or dump holds the
key in any of those encodings, and the start of the cycle says who holds which key."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem.agents import key_proxy, key_stand_in
from gitmem.agents.base import AgentError
from gitmem.config import parse_config
from gitmem.errors import ExitCode
from tests.support.fake_anthropic import messages_api
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, with_command_backend
from tests.support.hostile import command_agent, no_traceback
from tests.support.nobody import bwrap_works

REAL = "sk-ant-api03-" + "Pr0xyK3y" * 6
KEY = ("ANTHROPIC_API_KEY",)         # the template's agent.pass_env
OPENAI_REAL = "sk-proj-" + "0penAiK3y" * 5
needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")

DUMP = r'''
import base64, glob, json, urllib.request
out = OUT
dump = json.dumps(dict(os.environ)).encode()
if WALK_PROC:
    for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
        try:
            dump += b"\n" + open(path, "rb").read()
        except OSError:
            pass
open(os.path.join(root, "env.b85"), "wb").write(base64.b85encode(dump))
open(os.path.join(root, "env.utf32"), "wb").write(dump.decode("utf-8", "replace").encode("utf-32"))
with open(os.path.join(root, "env.xxd"), "wb") as handle:
    subprocess.run(["xxd"], input=dump, stdout=handle, check=True)
print(base64.b32encode(dump).decode())
sys.stderr.write(dump.hex() + "\n")
memory = b""
for line in open("/proc/self/maps"):
    span, perms = line.split()[:2]
    if perms.startswith("r") and "[vvar" not in line and "[vsyscall" not in line:
        low, high = (int(part, 16) for part in span.split("-"))
        try:
            with open("/proc/self/mem", "rb") as mem:
                mem.seek(low)
                memory += mem.read(high - low)
        except (OSError, OverflowError, ValueError):
            pass
open(os.path.join(out, "memory.bin"), "wb").write(memory)
request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=b'{"model": "m"}',
                                 headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"],
                                          "content-type": "application/json"})
print(urllib.request.urlopen(request).read().decode())
'''


def encodings(key: str) -> dict[str, bytes]:
    """The key as an agent could write it, each as bytes to look for."""
    raw = key.encode()
    return {"raw": raw, "utf-16-le": key.encode("utf-16-le"), "utf-16-be": key.encode("utf-16-be"),
            "utf-32-le": key.encode("utf-32-le"), "utf-32-be": key.encode("utf-32-be"),
            "hex": raw.hex().encode(), "HEX": raw.hex().upper().encode(),
            **{f"base32+{shift}": base64.b32encode(b"\0" * shift + raw)[8:-8] for shift in range(5)},
            **{f"base64+{shift}": base64.b64encode(b"\0" * shift + raw)[4:-4] for shift in range(3)}}


def decoded(name: str, data: bytes) -> bytes:
    """What the agent's dump files say, decoded the way they were written. The whole dumps are base85: a form the
    runner does not mask (it masks base32 and base64 forms of a withheld value), so they show what the agent
    really held."""
    if name.endswith(".b85"):
        return base64.b85decode(data)
    if name.endswith(".b32"):
        return base64.b32decode(data)
    if name.endswith(".utf32"):
        return data.decode("utf-32").encode()
    if name.endswith(".xxd"):
        return subprocess.run(["xxd", "-r"], input=data, capture_output=True, check=True).stdout
    return data


def holds(data: bytes, key: str) -> list[str]:
    return [name for name, needle in encodings(key).items() if needle in data]


@pytest.fixture
def upstream() -> Iterator[tuple[list[dict[str, str]], str]]:
    seen: list[dict[str, str]] = []

    def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        seen.append(headers)
        return 200, {"type": "message", "content": [], "said": "hello from upstream"}

    with messages_api(respond) as url:
        yield seen, url


def _committed(repo: GitRepo) -> bytes:
    """Every blob of every reference and of the index (what the cycle committed, salvaged or held)."""
    names = git(repo.path, "rev-list", "--all", "--objects").split()
    blobs = [name for name in names if len(name) == 40 and git(repo.path, "cat-file", "-t", name).strip() == "blob"]
    return b"".join(subprocess.run(["git", "cat-file", "blob", blob], cwd=repo.path, capture_output=True,
                                   check=True).stdout for blob in blobs)


@pytest.mark.parametrize("mode", [pytest.param("bubblewrap", marks=needs_bwrap), "none"])
def test_the_agent_never_holds_the_key_in_any_encoding_and_the_upstream_gets_it(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, upstream, mode: str) -> None:
    seen, url = upstream
    out = tmp_path / "agent-out"
    out.mkdir()
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    # Every process in the box's own PID namespace is the agent's; outside it, the runner's environment is this
    # test's (documented: without the box the agent can read the runner's process).
    body = DUMP.replace("OUT", repr(str(out))).replace("WALK_PROC", repr(mode == "bubblewrap"))
    command_agent(tmp_path, memrepo, body, pass_env=KEY, sandbox=mode)
    config = memrepo.read("gitmem.yaml").replace("    # writable: [~/.cache/my-agent]", f"    writable: [{out}]")
    memrepo.commit_files({"gitmem.yaml": config}, "the agent may write its dumps outside the tree")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    assert [headers.get("x-api-key") for headers in seen] == [REAL], "the upstream got the real key"
    assert "model key: the agent holds a placeholder for ANTHROPIC_API_KEY" in result.err
    dumps = {name: (memrepo.path / name).read_bytes() for name in ("env.b85", "env.utf32", "env.xxd")}
    assert all(dumps.values()), "the agent wrote its dumps"
    assert b"gitmem-placeholder-" in decoded("env.b85", dumps["env.b85"]), "it held the placeholder instead"
    found = {name: holds(decoded(name, data), REAL) + holds(data, REAL) for name, data in dumps.items()}
    found["memory"] = holds((out / "memory.bin").read_bytes(), REAL)
    found["output"] = holds((result.out + result.err).encode(), REAL)
    found["tree"] = [f"{path}: {hit}" for path in memrepo.path.rglob("*") if path.is_file() and ".git" not in
                     path.parts for hit in holds(path.read_bytes(), REAL)]
    found["commits"] = holds(_committed(memrepo), REAL)
    assert not any(found.values()), found
    assert (out / "memory.bin").stat().st_size > 1_000_000, "the memory dump is the process's, not empty"


def test_a_request_from_the_box_without_the_placeholder_is_refused(tmp_path: Path, memrepo: GitRepo, cli,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   upstream) -> None:
    """Another process that finds the port cannot spend the key: the proxy wants the cycle's placeholder."""
    seen, url = upstream
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    body = ("import json, urllib.request, urllib.error\n"
            "request = urllib.request.Request(os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages', data=b'{}',\n"
            "                                 headers={'x-api-key': 'a-guess'})\n"
            "try:\n    urllib.request.urlopen(request)\n    said = 'sent'\n"
            "except urllib.error.HTTPError as err:\n    said = str(err.code)\n"
            "open(os.path.join(root, 'said.txt'), 'w').write(said)\n")
    command_agent(tmp_path, memrepo, body, pass_env=KEY)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert memrepo.read("said.txt") == "401" and seen == []


def test_after_the_cycle_the_endpoint_is_gone(tmp_path: Path, memrepo: GitRepo, cli,
                                              monkeypatch: pytest.MonkeyPatch, upstream) -> None:
    seen, url = upstream
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    command_agent(tmp_path, memrepo, "open(os.path.join(root, 'where.txt'), 'w').write(os.environ['ANTHROPIC_BASE_URL']"
                                     " + ' ' + os.environ['ANTHROPIC_API_KEY'])", pass_env=KEY)
    assert cli(["cycle", "--json"], cwd=memrepo.path).code == ExitCode.OK
    where, placeholder = memrepo.read("where.txt").split()
    assert where != url and placeholder.startswith("gitmem-placeholder-")
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(urllib.request.Request(where + "/v1/messages", data=b"{}",
                                                      headers={"x-api-key": placeholder}), timeout=5)
    assert seen == []


# -- the plan: which keys, which endpoints ----------------------------------------------------------------------

def test_each_provider_gets_its_own_route_and_endpoint_variable() -> None:
    env = {"ANTHROPIC_API_KEY": REAL, "OPENAI_API_KEY": OPENAI_REAL, "GEMINI_API_KEY": "AIza" + "g" * 35,
           "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/gemini", "PATH": "/usr/bin"}
    chosen = key_stand_in.plan_keys(["my-agent"], env, environ={})
    assert [(r.provider.name, r.variables, r.upstream) for r in chosen.routes] == [
        ("Anthropic", ("ANTHROPIC_API_KEY",), "https://api.anthropic.com"),
        ("OpenAI", ("OPENAI_API_KEY",), "https://api.openai.com/v1"),
        ("Gemini", ("GEMINI_API_KEY",), "http://127.0.0.1:9/gemini")]
    assert chosen.held == ()
    with key_stand_in.serving(["my-agent"], env) as stand_in:
        for route in chosen.routes:
            assert stand_in.env[route.provider.endpoint].startswith("http://127.0.0.1:")
            for name in route.variables:
                assert stand_in.env[name].startswith("gitmem-placeholder-") and stand_in.env[name] != env[name]
        assert REAL not in json.dumps(stand_in.env) and OPENAI_REAL not in json.dumps(stand_in.env)
        assert stand_in.argv == ["my-agent"]


def test_a_key_of_a_provider_gitmem_cannot_stand_in_for_is_named_as_held() -> None:
    env = {"ANTHROPIC_API_KEY": REAL, "MISTRAL_API_KEY": "m" * 32}
    chosen = key_stand_in.plan_keys(["agent"], env, environ={})
    assert chosen.held == ("MISTRAL_API_KEY",)
    line = key_stand_in.describe_keys(chosen)
    assert "placeholder for ANTHROPIC_API_KEY" in line and "the agent holds MISTRAL_API_KEY itself" in line
    bad = key_stand_in.plan_keys(["agent"], {"ANTHROPIC_API_KEY": REAL, "ANTHROPIC_BASE_URL": "unix:///sock"},
                                 environ={})
    assert bad.routes == () and bad.held == ("ANTHROPIC_API_KEY",)
    assert "not an http(s) URL" in key_stand_in.describe_keys(bad)


def test_codex_is_pointed_at_the_proxy_through_its_own_config(tmp_path: Path) -> None:
    """Codex ignores OPENAI_BASE_URL: a `-c` override after the command's own wins, for the built-in provider
    or the custom one its `-c` settings or CODEX_HOME name; the upstream is that provider's base_url."""
    env = {"OPENAI_API_KEY": OPENAI_REAL, "CODEX_HOME": str(tmp_path / "codex")}
    plain = key_stand_in.plan_keys(["codex", "exec", "-"], env, environ={})
    assert [(r.upstream, r.codex_setting) for r in plain.routes] == [("https://api.openai.com/v1", "openai_base_url")]
    custom = ["codex", "exec", "-c", 'model_provider="fake"', "-c",
              'model_providers.fake={name="f", base_url="http://127.0.0.1:9/v1", env_key="OPENAI_API_KEY"}', "-"]
    chosen = key_stand_in.plan_keys(custom, env, environ={})
    assert [(r.upstream, r.codex_setting) for r in chosen.routes] == [("http://127.0.0.1:9/v1",
                                                                       "model_providers.fake.base_url")]
    with key_stand_in.serving(custom, env) as stand_in:
        assert stand_in.argv[:-2] == custom
        assert stand_in.argv[-2] == "-c" and stand_in.argv[-1].startswith('model_providers.fake.base_url="http://127')
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text('model_provider = "mine"\n[model_providers.mine]\n'
                                                    'base_url = "http://127.0.0.1:8/v1"\n', encoding="utf-8")
    # Deliberately changed: an endpoint Codex's config file names is where the agent could point it (the file is
    # the agent's to write wherever Codex reads it in a cycle), so no key is added on the way there; the agent
    # keeps its key, and the start note says why.
    saved = key_stand_in.plan_keys(["/opt/bin/codex", "exec", "-"], env, environ={})
    assert saved.routes == () and saved.held == ("OPENAI_API_KEY",)
    assert "config.toml, a file the agent can write" in key_stand_in.describe_keys(saved)
    (tmp_path / "codex" / "config.toml").write_text('openai_base_url = "https://attacker.example/v1"\n',
                                                    encoding="utf-8")
    redirected = key_stand_in.plan_keys(["codex", "exec", "-"], env, environ={})
    assert redirected.routes == () and "attacker" not in key_stand_in.describe_keys(redirected)
    overridden = key_stand_in.plan_keys(["codex", "exec", "-c", 'openai_base_url="http://127.0.0.1:7/v1"', "-"], env,
                                   environ={})
    assert [r.upstream for r in overridden.routes] == ["http://127.0.0.1:7/v1"]     # the human's own setting


def test_the_start_notes_say_who_holds_the_key(memrepo: GitRepo) -> None:
    config = parse_config(memrepo.read("gitmem.yaml").encode())
    assert "runner's own process" in key_stand_in.key_holders(config, "anthropic", {})[0]
    assert key_stand_in.key_holders(config, "scripted", {"ANTHROPIC_API_KEY": REAL}) == []
    plain = parse_config(with_command_backend(memrepo.read("gitmem.yaml"), "claude -p 'unbalanced").encode())
    [line] = key_stand_in.key_holders(plain, "command", {"ANTHROPIC_API_KEY": REAL, "AWS_SECRET_ACCESS_KEY": "a" * 40})
    assert line.startswith("model key: the agent holds a placeholder for ANTHROPIC_API_KEY")
    assert "AWS_SECRET_ACCESS_KEY" not in line, "a variable agent.pass_env does not name is withheld, not held"
    assert "without the box" in line and REAL not in line


def test_a_port_that_cannot_be_served_stops_the_run_rather_than_hand_over_the_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(99, "Cannot assign requested address")

    monkeypatch.setattr(key_proxy.KeyProxy, "__init__", refuse)
    with pytest.raises(AgentError, match="cannot serve the model key's loopback endpoint for Anthropic"):
        with key_stand_in.serving(["agent"], {"ANTHROPIC_API_KEY": REAL}):
            pytest.fail("the agent ran")


@pytest.mark.parametrize("argv", [[], [sys.executable, "-c", "pass"]])
def test_no_key_no_proxy(argv: list[str]) -> None:
    env = {"PATH": os.defpath, "ANTHROPIC_API_KEY": ""}
    assert key_stand_in.plan_keys(argv, env, environ={}) == key_stand_in.KeyPlan()
    with key_stand_in.serving(argv, env) as stand_in:
        assert stand_in.env == env and stand_in.proxies == [] and stand_in.note == ""


# A `codex` on PATH that dumps what it was given: its environment as base32 into the tree, its arguments.
CODEX_DUMP = """#!/bin/sh
cat > /dev/null
env | base32 -w0 > env.b32
printf '%s\\n' "$@" > argv.txt
gitmem log add --task "codex dump" --outcome built --result "dumped"
gitmem now add --did "codex dump" --human nothing --next more
"""


@needs_bwrap
def test_a_boxed_codex_whose_config_the_box_hides_holds_a_placeholder(tmp_path: Path, memrepo: GitRepo, cli,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The human's CODEX_HOME names a provider and the box hides it (agent.sandbox.writable does not name it):
    inside, Codex reads a fresh CODEX_HOME and so its built-in provider, which the `-c` setting points at the
    proxy. The file is not the agent's to write, nor read by the CLI, so it is no reason to hand over the key;
    before, the agent held it, and its base32 dump was committed."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model_provider = "corp"\n[model_providers.corp]\nname = "corp"\nbase_url = "https://llm.corp.invalid/v1"\n'
        'env_key = "OPENAI_API_KEY"\n', encoding="utf-8")
    bin_dir.mkdir()
    (bin_dir / "codex").write_text(CODEX_DUMP, encoding="utf-8")
    (bin_dir / "codex").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_REAL)
    text = with_command_backend(memrepo.read("gitmem.yaml"), "codex exec --json -", sandbox="bubblewrap")
    memrepo.commit_files({"gitmem.yaml": text.replace("    - ANTHROPIC_API_KEY", "    - OPENAI_API_KEY")},
                         "a boxed codex")

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err
    assert "the box hides CODEX_HOME" in result.err
    assert "model key: the agent holds a placeholder for OPENAI_API_KEY" in result.err, result.err
    dumped = decoded("env.b32", (memrepo.path / "env.b32").read_bytes())
    assert not holds(dumped, OPENAI_REAL) and b"OPENAI_API_KEY=gitmem-placeholder-" in dumped
    argv = memrepo.read("argv.txt").splitlines()
    assert argv[-2] == "-c" and argv[-1].startswith('openai_base_url="http://127.0.0.1:'), argv
    assert not holds(_committed(memrepo), OPENAI_REAL)


@pytest.mark.parametrize("wrapper", [["timeout", "600"], ["timeout", "-k", "10", "600"], ["env", "X=1"],
                                     ["nice", "-n", "5"], ["stdbuf", "-oL"], ["nohup"],
                                     ["timeout", "600", "env", "X=1"],
                                     ["/usr/bin/env", "-u", "Y", "--"], ["env", "-iu", "Y"],
                                     ["timeout", "--sig", "KILL", "600"], ["timeout", "-vk", "5", "10"],
                                     ["env", "--un", "Y"]])
def test_codex_behind_a_wrapper_command_is_codex(tmp_path: Path, wrapper: list[str]) -> None:
    """`timeout 600 codex exec -` runs Codex as much as `codex exec -`: its endpoint is read from Codex's own `-c`
    settings and config, and the stand-in's `-c` reaches it. It was read as an unknown CLI's (OPENAI_BASE_URL),
    so Codex, which ignores that, went to api.openai.com with the placeholder key."""
    env = {"OPENAI_API_KEY": OPENAI_REAL, "CODEX_HOME": str(tmp_path / "codex")}
    command = [*wrapper, "codex", "exec", "-c", 'openai_base_url="http://127.0.0.1:7/v1"', "-"]
    chosen = key_stand_in.plan_keys(command, env, environ={})
    assert [(r.upstream, r.codex_setting) for r in chosen.routes] == [("http://127.0.0.1:7/v1", "openai_base_url")]
    with key_stand_in.serving(command, env) as stand_in:
        assert stand_in.argv[:len(command)] == command
        assert stand_in.argv[-2] == "-c" and stand_in.argv[-1].startswith('openai_base_url="http://127.0.0.1')


@pytest.mark.parametrize("wrapper", [["env", "-Scodex exec"], ["env", "--split-string=X=1 codex exec"],
                                     ["env", "-S codex exec"], ["env", "-vS", "codex exec"],
                                     ["env", "-S", "codex exec 'unclosed"]])
def test_codex_named_in_env_split_string_is_codex(tmp_path: Path, wrapper: list[str]) -> None:
    """`env -S` takes its string as getopt does: attached (`-Scodex exec`, and a `#!/usr/bin/env -S codex exec`
    line, which the kernel passes as one word), after `=`, or in a cluster. Those were read as flags, so the runner
    saw no command and took Codex for an unknown CLI; a string with an unclosed quote crashed the reading."""
    env = {"OPENAI_API_KEY": OPENAI_REAL, "CODEX_HOME": str(tmp_path / "codex")}
    command = [*wrapper, "-c", 'openai_base_url="http://127.0.0.1:7/v1"', "-"]
    chosen = key_stand_in.plan_keys(command, env, environ={})
    assert [(r.upstream, r.codex_setting) for r in chosen.routes] == [("http://127.0.0.1:7/v1", "openai_base_url")]


def test_the_codex_home_env_sets_on_the_command_line_is_the_one_read(tmp_path: Path) -> None:
    """`env CODEX_HOME=/x codex …` reads /x/config.toml: an endpoint named there is the agent's to write, so no key
    is added on the way (as for the CODEX_HOME of the environment)."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "config.toml").write_text('openai_base_url = "https://attacker.example/v1"\n',
                                                        encoding="utf-8")
    env = {"OPENAI_API_KEY": OPENAI_REAL, "CODEX_HOME": str(tmp_path / "codex")}
    command = ["env", f"CODEX_HOME={tmp_path / 'elsewhere'}", "codex", "exec", "-"]
    chosen = key_stand_in.plan_keys(command, env, environ={})
    assert chosen.routes == () and chosen.held == ("OPENAI_API_KEY",)
