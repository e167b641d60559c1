"""gitmem.yaml: declared as data, validated once at load time, errors point at the bad value."""
from __future__ import annotations

import posixpath
import re
from dataclasses import Field, field, fields, is_dataclass, replace
from datetime import UTC
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from gitmem import codes
from gitmem.codes import RULES_VERSION
from gitmem.config.nesting import MAX_DEPTH, TooDeep, depth, parsing, within_depth, yaml_loader
from gitmem.config.validate import (
    EXPECTED,
    bounded_field,
    directory_problem,
    kind_in_words,
    lenient,
    name_problem,
    number_problem,
    shared_files,
    text_problem,
    workspace_name_problem,
)
from gitmem.errors import ExitCode, GitmemError
from gitmem.records import record

if TYPE_CHECKING:
    from collections.abc import Iterable

    from gitmem.gitio import Identity

CONFIG_NAME = "gitmem.yaml"
ROLES = ("now", "decisions", "log", "lessons", "rules", "roadmap")
REQUIRED_ROLES = ("now", "decisions", "log", "lessons", "rules")
BACKENDS = ("anthropic", "command", "scripted")     # agent backends; "" means anthropic when a key is set
RECALL_MODES = ("auto", "bm25", "semantic", "hybrid")
SANDBOX_MODES = ("auto", "bubblewrap", "none")     # how the command agent and run_command are confined
# Fields of Config that loading fills in, not keys of gitmem.yaml: which workspace was chosen, the warnings,
# and the default workspace's files.
LOADED_FIELDS = ("workspace", "warnings", "default_files")


# A ranker's weight; rankers are a mapping, not a field, so their range is declared here.
RANKER_WEIGHT: Field[Any] = bounded_field(1.0, 0.0, 100.0)
# The rankers `recall.rankers` may name (gitmem.recall.rank.RANKERS, and the semantic one): any other is a typo
# that recall would only meet later (GM926).
RANKER_NAMES = ("bm25", "semantic")


class ConfigError(GitmemError):
    """A config problem; the message names the file, the line when known, and the key path. `code`: the GM code
    of a config rule (`gitmem.codes.Code`, GM926), which the message then carries after the line."""

    exit_code = ExitCode.USAGE
    code: Any = None
    # Where the refusal points and what it says after the code, as data: a caller that shows the refusal in a
    # context of its own (`verify`, of a commit's gitmem.yaml) keeps the path, line and code of its JSON.
    path: str = CONFIG_NAME
    line: int = 1
    text: str = ""


def refused(code: Any, where: str, text: str) -> ConfigError:
    """A config refusal as the one line a diagnostic is, `path:line: GMnnn text`: `where` is `path:line` (the
    key's line, which ruamel's round-trip data knows), or the path alone, then line 1, where no line means anything.
    `code` is a `gitmem.codes.Code` of the config's kinds (GM926-GM930, and a fleet file's GM932), also the JSON
    failure's `code`."""
    located = where if re.search(r":[0-9]+$", where) else f"{where}:1"
    err = ConfigError(f"{located}: {code.code} {text}")
    err.code = code
    path, _, line = located.rpartition(":")
    err.path, err.line, err.text = path, int(line), text
    return err


@record(frozen=True)
class Files:
    """Where each memory file is, relative to `memory_dir`."""
    now: str = "NOW.md"
    decisions: str = "DECISIONS.md"
    log: str = "LOG.md"
    lessons: str = "LESSONS.md"
    rules: str = "RULES.md"
    roadmap: str = "ROADMAP.md"


@record(frozen=True)
class Shell:
    """The anthropic backend's `run_command` tool: whether it is on, and what it may run."""
    enabled: bool = False
    allow: tuple[str, ...] = ()
    timeout: int = bounded_field(120, 1, 86_400)


@record(frozen=True)
class Sandbox:
    """How the agent is confined (`agent.sandbox`)."""
    # auto: bubblewrap when `bwrap` works on this machine, else none (and the LOG entry's Evidence says so);
    # bubblewrap: refuse to start the cycle without it; none: run the agent as a plain process.
    mode: str = "auto"
    # Extra read-write directories inside the sandbox (absolute, or under `~/`), e.g. an agent CLI's cache.
    writable: tuple[str, ...] = ()


@record(frozen=True)
class Agent:
    """`agent:`: the agent's identity, backend, command, model and what passes to it."""
    name: str = "gitmem-agent"
    email: str = "agent@gitmem.invalid"
    backend: str = ""                       # anthropic | command | scripted; "" = anthropic when a key is set
    model: str = "claude-sonnet-5-5"
    command: str = ""                       # for the command backend, e.g. `claude -p`
    script: str = ""                        # for the scripted backend: a YAML file of tool calls per cycle
    shell: Shell = field(default_factory=Shell)
    max_retries: int = bounded_field(4, 0, 20)    # anthropic SDK retries for 429, 5xx and overloaded, with backoff
    # Environment variables the `command` agent gets although they hold keys. By default only the model's
    # API key, which an agent CLI needs (so repositories made before this setting keep working); a list given
    # replaces the default. Every other token, key or credential is withheld; GitHub tokens never pass.
    pass_env: tuple[str, ...] = ("ANTHROPIC_API_KEY",)
    # Paths a cycle may not change on its own, added to gitmem's defaults (gitmem.agents.protected).
    protected_paths: tuple[str, ...] = ()
    # The bubblewrap sandbox of the command agent and the run_command tool (gitmem.agents.sandbox);
    # `sandbox: auto` is short for `sandbox: {mode: auto}`.
    sandbox: Sandbox = field(default_factory=Sandbox)

    @property
    def identity(self) -> Identity:
        """Who the agent's commits are by (a cycle's, its salvage's, a proposal's, the close's): built here only."""
        from gitmem.gitio import Identity  # pygit2 loads with git work, not with the config

        return Identity(self.name, self.email)


@record(frozen=True)
class Limits:
    """`limits:`: the sizes the memory format checks hold files to."""
    now_block_lines: int = bounded_field(10, 3, 1_000, least_because="a NOW block's body holds its Did, Human and "
                                                                      "Next lines")
    rules_max_lines: int = bounded_field(200, 0, 100_000)
    proven_rules_max: int = bounded_field(30, 0, 10_000)
    grep_over_lines: int = bounded_field(300, 1, 10_000_000)
    pending_max: int = bounded_field(20, 1, 1_000)        # most Pending decisions (GM209)


@record(frozen=True)
class Cycle:
    """`cycle:`: a cycle's context, turns, tokens, time and file size limits."""
    log_entries: int = bounded_field(3, 1, 1_000)
    max_context_tokens: int = bounded_field(60000, 1, 10_000_000)
    max_turns: int = bounded_field(30, 1, 10_000)
    max_tokens: int = bounded_field(200000, 1, 1_000_000_000)
    timeout: int = bounded_field(1800, 1, 7 * 86_400)
    priorities: tuple[str, ...] = (
        "answer people", "fix the published product", "build something new", "measure")
    always_load: tuple[str, ...] = ()
    # The runner keeps bigger files out of its commits (GitHub refuses files over 100 MB).
    max_file_bytes: int = bounded_field(25 * 1024 * 1024, 1024, 100_000_000)
    # Daily caps on what the cycles record spending in LOG Evidence (gitmem.cycle.allowance); 0: no cap. Over
    # one, a cycle refuses to start until the next day or a higher cap.
    tokens_per_day: int = bounded_field(0, 0, 10**15)
    cost_per_day: float = bounded_field(0.0, 0.0, 1e9)


@record(frozen=True)
class Close:
    """`close:`: the daily close's model and its rules for promotions and stale decisions."""
    model: str = "claude-opus-5-5"
    confirmations: int = bounded_field(2, 1, 100)      # 0 would promote a lesson no later cycle confirmed
    max_promotions: int = bounded_field(3, 0, 1_000)
    stale_decision_days: int = bounded_field(3, 0, 36_500)
    # A close run within this many hours after midnight is the late run of the day before's close (a scheduler
    # runs the close in the evening, and GitHub's scheduled runs come up to 12 h late).
    late_hours: int = bounded_field(12, 0, 23)


@record(frozen=True)
class Recall:
    """`recall:`: how `gitmem recall` ranks and cuts what it finds."""
    min_score: float = bounded_field(0.35, 0.0, 1.0)
    gap: float = bounded_field(0.15, 0.0, 1.0)
    limit: int = bounded_field(6, 1, 1_000)
    recency_half_life_days: float = bounded_field(30.0, 0.0, 36_500.0)
    recency_weight: float = bounded_field(0.2, 0.0, 1.0)
    rankers: tuple[tuple[str, float], ...] = (("bm25", 1.0), ("semantic", 1.0))
    mode: str = "auto"                      # auto | bm25 | semantic | hybrid (auto: hybrid with an onnx: encoder)
    model: str = "wordllama"                # embedding model: wordllama (shipped in its wheel) or model2vec:DIRECTORY
    # The semantic score that counts as relevance 0.5 (calibrated).
    semantic_scale: float = bounded_field(2.75, 0.001, 1_000.0)


@record(frozen=True)
class Trust:
    """`trust:`: whose signed commits count as the human's."""
    # SSH public keys ("ssh-ed25519 AAAA…") whose signed commits, made in the runner's checkout during a cycle,
    # count as the human's. Without one, a human's word reaches memory only through the remote.
    signing_keys: tuple[str, ...] = ()
    # Answers (a decision moved to Resolved) count only in commits signed by one of those keys: `verify` reports
    # any other answer as GM210 (gitmem.gitio.ssh_signatures says what is verified: SSH signatures only).
    signed_answers: bool = False


@record(frozen=True)
class WorkspaceFiles:
    """One workspace's memory folder and files (a repository may hold several)."""
    memory_dir: str = "."
    files: Files = field(default_factory=Files)


@record(frozen=True)
class Config:
    """A parsed, validated gitmem.yaml."""
    # Which release's rules `verify` holds this repository's commits to (gitmem.checks.generation). A config
    # without it is from before rules had versions: 1. New repositories start at the newest (the template).
    rules_version: int = bounded_field(1, 1, RULES_VERSION)
    memory_dir: str = "."
    files: Files = field(default_factory=Files)
    agent: Agent = field(default_factory=Agent)
    timezone: str = "UTC"
    limits: Limits = field(default_factory=Limits)
    cycle: Cycle = field(default_factory=Cycle)
    close: Close = field(default_factory=Close)
    recall: Recall = field(default_factory=Recall)
    trust: Trust = field(default_factory=Trust)
    workspaces: tuple[tuple[str, WorkspaceFiles], ...] = ()
    workspace: str = ""                     # the selected workspace's name, "" for the default one
    warnings: tuple[str, ...] = ()
    # The default workspace's files, kept when another one is selected: what that workspace may not write.
    default_files: WorkspaceFiles | None = None

    def path(self, role: str) -> str:
        """Repo-relative POSIX path of a memory file."""
        name = getattr(self.files, role)
        return str(PurePosixPath(self.memory_dir) / name) if self.memory_dir not in ("", ".") else name

    def memory_paths(self, *, optional: bool = True) -> dict[str, str]:
        roles = ROLES if optional else REQUIRED_ROLES
        return {role: self.path(role) for role in roles}

    def with_workspace(self, name: str) -> Config:
        for key, workspace in self.workspaces:
            if key == name:
                home = self.default_files or WorkspaceFiles(self.memory_dir, self.files)
                return replace(self, memory_dir=workspace.memory_dir, files=workspace.files, workspace=name,
                               default_files=home)
        names = [key for key, _ in self.workspaces]
        known = ", ".join(names) or "none are configured"
        raise refused(codes.CONFIG_UNKNOWN_NAME, CONFIG_NAME,
                      f"unknown workspace {name!r} ({known}){did_you_mean(name, names)}")

    def workspace_paths(self) -> dict[str, dict[str, str]]:
        """Every workspace's memory files by workspace name ("" the default one), role -> path."""
        home = self.default_files or WorkspaceFiles(self.memory_dir, self.files)
        return {name: replace(self, memory_dir=place.memory_dir, files=place.files).memory_paths()
                for name, place in (("", home), *self.workspaces)}

    def foreign_paths(self) -> dict[str, tuple[str, str]]:
        """The memory files of the other workspaces, path -> (workspace, role): what a cycle of this workspace
        may not write. A file this workspace shares with another (one ROADMAP for all) is its own
        (gitmem.config.ownership states the policy)."""
        from gitmem.config.ownership import Ownership

        return Ownership.of(self).foreign_to(self.workspace)

    def tzinfo(self) -> Any:
        # UTC, the default, needs no zone database: loading zoneinfo costs the pre-commit path milliseconds.
        if self.timezone == "UTC":
            return UTC
        from zoneinfo import ZoneInfo
        return ZoneInfo(self.timezone)


# The sections of gitmem.yaml by class name, as the annotations of the fields that hold them name them.
# (WorkspaceFiles is read under `workspaces:`, by name.)
_SECTIONS: dict[str, type] = {cls.__name__: cls for cls in (Files, Shell, Sandbox, Agent, Limits, Cycle, Close,
                                                            Recall, Trust)}


def load_config(root: Path | str, *, workspace: str | None = None) -> Config:
    """Load `gitmem.yaml` from the repo root; a missing file means all defaults. It is read only as a regular
    file inside the work tree (`gitmem.confined.files`): a link, a directory or a FIFO is a config error."""
    from gitmem.confined import files

    try:
        data = files.read_bytes(Path(root), CONFIG_NAME)
    except files.FileRefused as err:     # a link, a directory, no permission: one line, exit 2
        raise refused(codes.CONFIG_UNREADABLE, CONFIG_NAME, str(err)) from None
    config = Config() if data is None else parse_config(data, source=CONFIG_NAME)
    return config.with_workspace(workspace) if workspace else config


def parse_config(data: bytes, *, source: str = CONFIG_NAME, strict: bool = True) -> Config:
    """The config in `data`. `strict=False` reads a config from history: when it breaks only rules that are new
    in this release (`gitmem.config.validate`), it is read by the rules it was written under."""
    if not strict:
        try:
            return parse_config(data, source=source)
        except ConfigError:
            with lenient():
                return parse_config(data, source=source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise refused(codes.CONFIG_UNREADABLE, source, f"not valid UTF-8 ({err.reason})") from None
    quick = _plain_config(text, source)
    return quick if quick is not None else _full_config(text, source)


def _plain_config(text: str, source: str) -> Config | None:
    """The config of plain YAML read without ruamel.yaml (the pre-commit path saves ~10 ms); None whenever
    anything needs ruamel.yaml: other YAML, a warning or an error, whose messages carry its line numbers."""
    from gitmem.config.plain_yaml import load_plain_yaml

    raw = load_plain_yaml(text)
    if not isinstance(raw, dict) or depth(raw) > MAX_DEPTH:
        return None
    warnings: list[str] = []
    try:
        config: Config = _build(Config, raw, source, "", warnings)
        _validate(config, source, raw)
    except ConfigError:
        return None
    return config if not warnings else None


def load_yaml(text: str, source: str) -> Any:
    """A YAML document the agent (or any stranger) may have written, read round-trip with ruamel.yaml under
    the one nesting, expansion and digit bound; every failure is one ConfigError line naming `source` (and
    the line, where YAML knows it)."""
    from ruamel.yaml.error import YAMLError

    try:
        with parsing():
            return within_depth(yaml_loader("rt").load(text))
    except TooDeep as err:
        raise refused(codes.CONFIG_UNREADABLE, source, f"{err}") from None
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise refused(codes.CONFIG_UNREADABLE, source + where,
                      f"invalid YAML: {getattr(err, 'problem', None) or err}") from None


def _full_config(text: str, source: str) -> Config:
    raw = load_yaml(text, source)
    if raw is None:
        return Config()
    warnings: list[str] = []
    config: Config = _build(Config, raw, source, "", warnings, where=source + _document_line(raw, text))
    config = replace(config, warnings=tuple(warnings))
    _validate(config, source, raw)
    return config


def _document_line(raw: Any, text: str) -> str:
    """`:N` of the line a YAML document's value starts on, so an error about the whole document (a list or
    a scalar where the mapping of settings belongs) still reads `path:line:`."""
    position = getattr(raw, "lc", None)
    if position is not None and position.line is not None:
        return f":{position.line + 1}"
    # A scalar carries no position: its line is the first that is not blank, a comment or a document marker.
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "%")) and stripped != "---":
            return f":{number}"
    return ":1"


def _line(node: Any, key: Any) -> str:
    try:
        return f":{node.lc.key(key)[0] + 1}"
    except Exception:  # plain dicts from tests carry no positions
        return ""


def key_line(root: Path | str, dotted: str) -> int:
    """The line of the setting `dotted` (`cycle.tokens_per_day`) in the gitmem.yaml at `root`, or of the deepest key
    of it the file has (`agent.sandbox` for `agent.sandbox.mode` written short): what a refusal the setting caused
    points at, as config errors do. 1 when the file does not have it, or does not read (it loaded before). Read on
    a refusal's path only: ruamel.yaml keeps the lines."""
    from gitmem.confined import files

    try:
        data = files.read_bytes(Path(root), CONFIG_NAME)
        raw = load_yaml(data.decode("utf-8"), CONFIG_NAME) if data is not None else None
    except (files.FileRefused, UnicodeDecodeError, ConfigError):
        return 1
    located = _where(raw, CONFIG_NAME, dotted)
    return int(located.rpartition(":")[2]) if located != CONFIG_NAME else 1


def _where(raw: Any, source: str, dotted: str) -> str:
    """`source:line` of a dotted key in the loaded YAML, or just `source` when the key is not there."""
    node, line = raw, ""
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            break
        line = _line(node, key) or line
        node = node[key]
    return source + line


def _build(cls: type, raw: Any, source: str, prefix: str, warnings: list[str], where: str | None = None) -> Any:
    if not isinstance(raw, dict):
        raise refused(codes.CONFIG_WRONG_TYPE, where or source,
                      f"{prefix.rstrip('.') or 'top level'}: expected a mapping, "
                      f"got {kind_in_words(raw)}")
    known = {f.name: f for f in fields(cls) if f.name not in LOADED_FIELDS}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        if key not in known:
            hint = did_you_mean(key, known, prefix)
            warnings.append(f"{source}{_line(raw, key) or ':1'}: {codes.CONFIG_UNKNOWN_NAME.code} unknown key "
                            f"{dotted!r} ignored{hint}")
            continue
        values[key] = _coerce(field_type(known[key]), value, source + _line(raw, key), dotted, warnings, known[key])
    return cls(**values)


def did_you_mean(key: object, known: Iterable[str], prefix: str = "") -> str:
    """"; did you mean 'timezone'?" for the known key closest to a mistyped one (with its dotted `prefix`), or ""."""
    import difflib

    close = difflib.get_close_matches(str(key), sorted(known), n=1)
    return f"; did you mean {prefix + close[0]!r}?" if close else ""


def _zone_meant(name: str) -> str:
    """"; did you mean 'Europe/Madrid'?" for a zone name written in the wrong case (`europe/madrid`, `utc`: zone
    names are case-sensitive file names) or mistyped; "" when none is near. Read only on the error path."""
    from zoneinfo import available_timezones

    zones = available_timezones() | {"UTC"}
    by_case = {zone.casefold(): zone for zone in sorted(zones)}
    same = by_case.get(str(name).strip().casefold())
    return f"; did you mean {same!r}?" if same is not None else did_you_mean(name, zones)


def field_type(spec: Field[Any]) -> type | str:
    """What a config field holds, read from its annotation without evaluating it (typing.get_type_hints
    compiles every annotation, a millisecond and a half of each `gitmem check`): a section's class, or the name
    of the value's type, `int`, `str`, `bool`, `float` or `tuple`."""
    written = spec.type if isinstance(spec.type, str) else spec.type.__name__
    head = written.split("[", 1)[0].strip()
    section = _SECTIONS.get(head)
    if section is not None:
        return section
    if head not in ("int", "str", "bool", "float", "tuple"):
        raise TypeError(f"config field {spec.name}: {written!r} is not a type the config reader knows")
    return head


def _coerce(hint: type | str, value: Any, where: str, dotted: str, warnings: list[str], spec: Field[Any]) -> Any:
    if isinstance(hint, type) and is_dataclass(hint):
        # `limits:` with every key commented out loads as None: it means "all defaults", not an error.
        value = {} if value is None else value
        if hint is Sandbox and isinstance(value, str):      # `sandbox: auto`, the shorthand of {mode: auto}
            value = {"mode": value}
        elif hint is Sandbox and not isinstance(value, dict):
            raise refused(codes.CONFIG_WRONG_TYPE, where,
                          f"{dotted}: expected one of {', '.join(SANDBOX_MODES)} or a mapping "
                          f"(mode, writable), got {kind_in_words(value)}")
        return _build(hint, value, where.split(":")[0], dotted + ".", warnings, where)
    text = hint if isinstance(hint, str) else hint.__name__
    if dotted == "workspaces":
        if not isinstance(value, dict):
            raise refused(codes.CONFIG_WRONG_TYPE, where, "workspaces: expected a mapping of name to settings")
        for name in value:
            problem = workspace_name_problem(str(name))
            if problem is not None:
                raise refused(codes.CONFIG_BAD_VALUE, where.split(":")[0] + _line(value, name),
                              f"workspaces: {str(name)!r} {problem}")
        return tuple((str(name), _build(WorkspaceFiles, spec or {}, where.split(":")[0], f"workspaces.{name}.",
                                        warnings, where.split(":")[0] + _line(value, name)))
                     for name, spec in value.items())
    if dotted.endswith("rankers"):
        if not isinstance(value, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  for v in value.values()):
            raise refused(codes.CONFIG_WRONG_TYPE, where, f"{dotted}: expected a mapping of ranker name to weight")
        for name, weight in value.items():
            problem = text_problem(str(name)) or number_problem(RANKER_WEIGHT, weight)
            if problem is not None:
                raise refused(codes.CONFIG_BAD_VALUE, where, f"{dotted}.{str(name)!r}: {problem}")
            if str(name) not in RANKER_NAMES:        # at the name's own line when the YAML gives one
                line = _line(value, name)
                raise _unknown_ranker(str(name), where.split(":")[0] + line if line else where)
        return tuple((str(k), float(v)) for k, v in value.items())
    if text == "tuple":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise refused(codes.CONFIG_WRONG_TYPE, where, f"{dotted}: expected a list of strings")
        for item in value:
            problem = text_problem(item)
            if problem is not None:
                raise refused(codes.CONFIG_BAD_VALUE, where, f"{dotted}: {item!r} {problem}")
        return tuple(value)
    kinds: dict[str, type[Any] | tuple[type[Any], ...]] = {"int": int, "str": str, "bool": bool, "float": (int, float)}
    expected = kinds.get(text, object)
    if (isinstance(value, bool) and expected is not bool) or not isinstance(value, expected):
        raise refused(codes.CONFIG_WRONG_TYPE, where,
                      f"{dotted}: expected {EXPECTED.get(text, text)}, got {kind_in_words(value)}")
    problem = (number_problem(spec, value) if text in ("int", "float")
               else text_problem(value) if text == "str" else None)
    if problem is not None:
        raise refused(codes.CONFIG_BAD_VALUE, where, f"{dotted}: {problem}")
    return float(value) if text == "float" else value


def _unknown_ranker(name: str, where: str) -> ConfigError:
    """GM926 as a config error, `gitmem.yaml:LINE: GM926 recall.rankers: …`: the one line a diagnostic is."""
    import difflib

    close = difflib.get_close_matches(name, RANKER_NAMES, n=1)
    message = codes.CONFIG_UNKNOWN_RANKER.messages[""]
    text = message.text.format(name=name, known=", ".join(RANKER_NAMES),
                               meant=f"; did you mean {close[0]!r}?" if close else "")
    return refused(codes.CONFIG_UNKNOWN_RANKER, where, f"{text} (hint: {message.hint})")


def _validate(config: Config, source: str, raw: Any = None) -> None:
    raw = raw if raw is not None else {}
    try:
        if config.timezone != "UTC":     # the default needs no zone database: the check path skips loading it
            config.tzinfo()
    except Exception:
        raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'timezone'),
                      f"timezone: {config.timezone!r} is not an IANA "
                      f"time zone name (for example UTC or Europe/Madrid){_zone_meant(config.timezone)}") from None
    # Workspaces are checked like the top level: each has its own memory_dir and files.
    places = [("", config.memory_dir, config.files)]
    places += [(f"workspaces.{name}.", ws.memory_dir, ws.files) for name, ws in config.workspaces]
    for prefix, memory_dir, files in places:
        for name in (f.name for f in fields(Files)):
            value = getattr(files, name)
            problem = name_problem(value)
            if problem is not None:
                key = f"{prefix}files.{name}"
                raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, key), f"{key}: {value!r} {problem}")
        problem = directory_problem(memory_dir)
        if problem is not None:
            key = f"{prefix}memory_dir"
            raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, key), f"{key}: {memory_dir!r} {problem}")
        shared = shared_files([(prefix, memory_dir, {f.name: getattr(files, f.name) for f in fields(Files)})])
        if shared is not None:
            key, other, path = shared
            written = other if _where(raw, source, other) != _where(raw, source, prefix + "files") else key
            raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, written),
                          f"{other} and {key} both name {path!r}; each role "
                          "needs a file of its own")
    if config.recall.mode not in RECALL_MODES:
        raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'recall.mode'),
                      f"recall.mode: {config.recall.mode!r} "
                      f"is not one of {', '.join(RECALL_MODES)}")
    _validate_agent_lists(config, source, raw)
    if config.agent.backend not in ("", *BACKENDS):
        raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'agent.backend'),
                      f"agent.backend: {config.agent.backend!r} "
                      f"is not one of {', '.join(BACKENDS)}")


def _validate_agent_lists(config: Config, source: str, raw: Any) -> None:
    from gitmem.secrets import GITHUB_TOKEN_ENV

    for name in config.agent.pass_env:
        if name.upper() in GITHUB_TOKEN_ENV or not name or "=" in name or "\0" in name:
            why = "GitHub tokens never reach the agent" if name.upper() in GITHUB_TOKEN_ENV else "not a variable name"
            raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'agent.pass_env'),
                          f"agent.pass_env: {name!r}: {why}")
    sandbox = config.agent.sandbox
    if sandbox.mode not in SANDBOX_MODES:
        raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'agent.sandbox.mode'),
                      f"agent.sandbox.mode: {sandbox.mode!r} is "
                      f"not one of {', '.join(SANDBOX_MODES)}")
    for directory in sandbox.writable:
        # `/.` and `~/./` are `/` and `~`: judged as the path they name, not as spelled
        named = posixpath.normpath(directory).rstrip("/")
        if not directory.startswith(("/", "~/")) or ".." in directory.split("/") or named in ("", "~"):
            raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'agent.sandbox.writable'),
                          f"agent.sandbox.writable: "
                          f"{directory!r} must be an absolute directory (or one under ~/), not / or ~ itself")
    for pattern in config.agent.protected_paths:
        if not pattern.strip("/ ") or ".." in pattern.split("/") or any(ord(c) < 32 for c in pattern):
            raise refused(codes.CONFIG_BAD_VALUE, _where(raw, source, 'agent.protected_paths'),
                          f"agent.protected_paths: {pattern!r} "
                          "must be a path inside the repository")
