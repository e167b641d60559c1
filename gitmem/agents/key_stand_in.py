"""Which model keys the agent CLI gets as placeholders, and where it is pointed instead (gitmem.agents.key_proxy).

For each provider whose key the agent's environment holds (agent.pass_env named it), the runner serves a
loopback `KeyProxy` to the provider's endpoint, and the agent gets a random per-cycle placeholder in the key's
variable and the proxy's URL in the variable its CLIs take their base URL from: Claude Code's
ANTHROPIC_BASE_URL, Gemini CLI's GOOGLE_GEMINI_BASE_URL, OPENAI_BASE_URL for OpenAI's SDKs (Qwen Code reads it,
and OpenCode where its provider's `baseURL` is `{env:OPENAI_BASE_URL}`: docs/opencode-qwen.md), GitHub Copilot
CLI's COPILOT_PROVIDER_BASE_URL for the model provider it is given. Codex takes its
endpoint from its config only, so a `codex` command gets `-c` overrides at the end of its command line, for
the built-in provider (`openai_base_url`) or for the provider it is configured with (`model_providers.NAME.
base_url`, when that provider reads one of the keys below). The upstream is the endpoint the human chose (the
same variable or Codex config, read before it is replaced) or the provider's public API.

A key the agent still holds is named before the cycle starts (`key_holders`): a secret variable agent.pass_env
names that is none of these providers' keys (the command talks to a provider gitmem cannot stand in for), or
one whose endpoint is not an http(s) URL. Masking (gitmem.secrets) stays as the second line for those.
"""
from __future__ import annotations

import os
import secrets as random
import shlex
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem import secrets
from gitmem.agents import sandbox, wrappers
from gitmem.agents.base import AgentError
from gitmem.agents.key_proxy import LOOPBACK, KeyProxy, ProxyError, Upstream
from gitmem.config.nesting import loads_toml
from gitmem.config.user_files import read_settings


@dataclass(frozen=True)
class Provider:
    """A model API: the variables that hold its key, the variable its CLIs read the endpoint from, the
    endpoint without one, and where its requests carry the key (header names, `key` for `?key=`)."""

    name: str
    keys: tuple[str, ...]
    endpoint: str
    default: str
    slots: tuple[str, ...]


PROVIDERS = (Provider("Anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "ANTHROPIC_BASE_URL",
                      "https://api.anthropic.com", ("x-api-key", "authorization")),
             Provider("OpenAI", ("OPENAI_API_KEY", "CODEX_API_KEY"), "OPENAI_BASE_URL", "https://api.openai.com/v1",
                      ("authorization",)),
             Provider("Gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "GOOGLE_GEMINI_BASE_URL",
                      "https://generativelanguage.googleapis.com", ("x-goog-api-key", "key")),
             # GitHub Copilot CLI's own provider (BYOK): its type, openai by default or anthropic, decides the
             # header; the Azure type's `api-key` header is not a slot, so its requests are refused, never sent
             Provider("Copilot provider", ("COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BEARER_TOKEN"),
                      "COPILOT_PROVIDER_BASE_URL", "https://api.openai.com/v1", ("authorization", "x-api-key")))
ENDPOINTS = tuple(provider.endpoint for provider in PROVIDERS)
PLACEHOLDER_PREFIX = "gitmem-placeholder-"
PROXY_ENV = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
CODEX = "codex"


@dataclass(frozen=True)
class Route:
    """One provider's keys (variable names) behind one proxy to `upstream`; `codex_setting` is the Codex config
    key that points a `codex` command at the proxy, when the command is one."""

    provider: Provider
    variables: tuple[str, ...]
    upstream: str
    codex_setting: str = ""


@dataclass(frozen=True)
class KeyPlan:
    """What the agent's run will hold: the routes the runner serves, and the secret variables it keeps."""

    routes: tuple[Route, ...] = ()
    held: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()      # why a provider's key stays with the agent (an endpoint not http(s))


@dataclass
class StandIn:
    """The command and environment the agent runs with while the proxies serve."""

    argv: list[str]
    env: dict[str, str]
    plan: KeyPlan
    proxies: list[KeyProxy] = field(default_factory=list)

    @property
    def note(self) -> str:
        return describe_keys(self.plan)


def plan_keys(argv: list[str], env: Mapping[str, str], *, environ: Mapping[str, str] | None = None,
              fresh: Iterable[str] = ()) -> KeyPlan:
    """Which of `env`'s keys (the agent's environment, scrubbed) the runner keeps, for running `argv`. `fresh`:
    the CLI config variables the box gives a fresh directory (gitmem.agents.sandbox.fresh_homes)."""
    environ = os.environ if environ is None else environ
    program, assigned = wrappers.unwrapped(argv)          # `timeout 600 codex …` runs Codex as much as `codex …`
    codex = _codex_choice(program, {**env, **assigned}, environ, hidden="CODEX_HOME" in fresh) \
        if program and os.path.basename(program[0]) == CODEX else None
    routes: list[Route] = []
    problems: list[str] = []
    for provider in PROVIDERS:
        variables = tuple(name for name in provider.keys if env.get(name))
        if not variables:
            continue
        upstream, setting = env.get(provider.endpoint) or provider.default, ""
        if codex is not None and provider.name == "OpenAI":
            if codex.named_in is not None:
                problems.append(f"{', '.join(variables)}: Codex's endpoint comes from {codex.named_in}, a file "
                                "the agent can write, so no key is added on the way there")
                continue
            upstream, setting = codex.upstream, codex.setting
        try:
            Upstream.parse(upstream)
        except ProxyError as err:
            problems.append(f"{', '.join(variables)}: {err}")
            continue
        routes.append(Route(provider, variables, upstream, setting))
    routed = {name for route in routes for name in route.variables}
    held = tuple(sorted(name for name, value in env.items()
                        if value and secrets.is_secret_name(name) and name not in routed))
    return KeyPlan(tuple(routes), held, tuple(problems))


def describe_keys(plan: KeyPlan) -> str:
    """One line for the start of the cycle and its Evidence: which keys the agent holds and which it does not."""
    said = []
    if plan.routes:
        names = ", ".join(name for route in plan.routes for name in route.variables)
        said.append(f"the agent holds a placeholder for {names}; a loopback endpoint outside the agent adds the "
                    "key")
    if plan.held or plan.problems:
        why = "; ".join(plan.problems) or "no key-adding endpoint serves it"
        said.append(f"the agent holds {', '.join(plan.held) or 'its key'} itself ({why}): masking is all that "
                    "keeps it out of what is committed")
    return "model key: " + "; ".join(said) if said else ""


@contextmanager
def serving(argv: list[str], env: Mapping[str, str], *, fresh: Iterable[str] = ()) -> Iterator[StandIn]:
    """Serve the plan's proxies for the duration; yields the agent's argv and environment pointing at them.
    `fresh`: as `plan_keys` takes it."""
    chosen = plan_keys(argv, env, fresh=fresh)
    stand_in = StandIn(list(argv), dict(env), chosen)
    try:
        for route in chosen.routes:
            placeholders = {name: _placeholder() for name in route.variables}
            try:
                proxy = KeyProxy(route.upstream, {placeholders[name]: env[name] for name in route.variables},
                                 route.provider.slots)
            except OSError as err:     # no loopback port: the agent does not run with the key instead
                raise AgentError(f"cannot serve the model key's loopback endpoint for {route.provider.name}: "
                                 f"{err.strerror or err}") from None
            proxy.start()
            stand_in.proxies.append(proxy)
            stand_in.env.update(placeholders)
            stand_in.env[route.provider.endpoint] = proxy.url
        if chosen.routes:
            stand_in.env.update(_loopback_not_proxied(stand_in.env))
            if route.codex_setting:
                stand_in.argv = _with_codex_setting(stand_in.argv, route.codex_setting, proxy.url)
        yield stand_in
    finally:
        for proxy in stand_in.proxies:
            proxy.close()


def key_holders(config: Any, backend: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """What to say before a cycle of `backend` starts about who holds the model's key."""
    environ = os.environ if environ is None else environ
    if backend == "anthropic":
        return ["model key: the anthropic backend calls the model from the runner's own process, which holds the "
                "key; the commands the agent runs (run_command) get no key"]
    if backend != "command":
        return []
    env = secrets.agent_environment(environ, config.agent.pass_env)
    try:
        argv = shlex.split(config.agent.command or "")
    except ValueError:                 # unbalanced quotes: the run fails, and says so
        argv = []
    try:
        box = sandbox.choose(config)
    except sandbox.SandboxUnavailable:         # the runner refuses the cycle, and says why
        return []
    fresh = sandbox.fresh_homes(box, config.agent.sandbox.writable, environ)
    line = describe_keys(plan_keys(argv, env, environ=environ, fresh=fresh))
    if line and box.mode != "bubblewrap":
        line += ("; without the box the agent runs as the runner's user and can read the runner's own "
                 "environment, key included")
    return [line] if line else []


def _loopback_not_proxied(env: Mapping[str, str]) -> dict[str, str]:
    """NO_PROXY and no_proxy with 127.0.0.1 added, where `env` names a forward proxy: an agent CLI that honours
    HTTP_PROXY would send its loopback requests there, where the runner's endpoint is not (the runner takes
    the way out itself: gitmem.agents.key_proxy)."""
    if not any(env.get(name) for name in PROXY_ENV):
        return {}
    listed = [part.strip() for part in (env.get("NO_PROXY") or env.get("no_proxy") or "").split(",") if part.strip()]
    value = ",".join([*listed, LOOPBACK] if LOOPBACK not in listed else listed)
    return {"NO_PROXY": value, "no_proxy": value}


def _placeholder() -> str:
    return PLACEHOLDER_PREFIX + random.token_hex(24)


# -- Codex: its endpoint comes from its config -----------------------------------------------------------------

@dataclass(frozen=True)
class CodexEndpoint:
    """Where the provider `codex` will use sends its requests, and the config key that points it elsewhere.
    `named_in`: the config file that names the endpoint instead of the command's own `-c` settings. That file is
    the agent's to write wherever Codex reads it during a cycle (without the box, or bound writable into it), so
    no key is sent where it says: such a route serves no key, and the agent keeps its key, as `describe_keys` says."""

    upstream: str
    setting: str
    named_in: Path | None = None


def _codex_choice(argv: list[str], env: Mapping[str, str], environ: Mapping[str, str], *,
                  hidden: bool = False) -> CodexEndpoint | None:
    """The endpoint of the provider `codex` will use: from its `-c` overrides, else its CODEX_HOME config, which
    a box that gives Codex a fresh CODEX_HOME (`hidden`) keeps from it. None: the provider reads no key of
    OpenAI's (its own, unknown)."""
    overrides = _codex_overrides(argv)
    home = env.get("CODEX_HOME") or environ.get("CODEX_HOME") or \
        str(Path(env.get("HOME") or environ.get("HOME") or "~").expanduser() / ".codex")
    config = Path(home) / "config.toml"
    saved = {} if hidden else read_settings(config, "toml")
    provider = str(overrides.get("model_provider") or saved.get("model_provider") or "openai")
    if provider == "openai":
        given, from_file, setting = overrides.get("openai_base_url"), saved.get("openai_base_url"), "openai_base_url"
    else:
        table = {**_table(saved, "model_providers", provider), **_table(overrides, "model_providers", provider)}
        if table.get("env_key", "OPENAI_API_KEY") not in ("OPENAI_API_KEY", "CODEX_API_KEY"):
            return None
        given, from_file = _table(overrides, "model_providers", provider).get("base_url"), table.get("base_url")
        setting = f"model_providers.{provider}.base_url"
    if given:
        return CodexEndpoint(str(given), setting)
    return CodexEndpoint("https://api.openai.com/v1", setting, config if from_file else None)


def _codex_overrides(argv: list[str]) -> dict[str, Any]:
    """Codex's `-c key=value` settings on `argv`, parsed as Codex parses them (TOML, else a plain string),
    later ones over earlier ones."""
    found: dict[str, Any] = {}
    for index, arg in enumerate(argv):
        if arg in ("-c", "--config") and index + 1 < len(argv):
            setting = argv[index + 1]
        elif arg.startswith("--config="):
            setting = arg.partition("=")[2]
        else:
            continue
        key, _, value = setting.partition("=")
        try:
            parsed = loads_toml(f"{key.strip()} = {value}")
        except ValueError:             # not TOML (or nested past any bound): Codex takes it as a plain string
            parsed = _nested(key.strip().split("."), value)
        _merge(found, parsed)
    return found


def _with_codex_setting(argv: list[str], key: str, url: str) -> list[str]:
    """`argv` with `-c key="url"` last, where it wins over the command's own (before Codex's `--`, if any: not a
    wrapper's, `env -u X -- codex …`)."""
    return wrappers.with_options(argv, ["-c", f"{key}={_toml_string(url)}"])


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _nested(path: list[str], value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {path[-1]: value}
    for part in reversed(path[:-1]):
        out = {part: out}
    return out


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _table(data: Mapping[str, Any], *path: str) -> dict[str, Any]:
    for part in path:
        inner = data.get(part) if isinstance(data, Mapping) else None
        if not isinstance(inner, Mapping):
            return {}
        data = inner
    return dict(data)
