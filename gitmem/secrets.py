"""Secrets: what they look like, which environment variables hold them, and how they are removed.

One module for every place that must not leak one: the GM903 check (memory files and every other staged text
file), messages and error text, files the runner commits (streamed, any size), the agent backends and the
environment they get, the GitHub client. Patterns are compiled on first use, and each runs only when one of its
literal needles is in the data (`bytes.find` runs at memory speed), so importing this costs nothing on the
pre-commit path until a file actually holds a needle.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache, lru_cache
from typing import Any, BinaryIO

# Variables whose values are secrets wherever they appear (the model's key, tokens that can push).
SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
              "GITMEM_GIT_TOKEN", "GITMEM_FLEET_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
              "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN")
# Never handed to an agent, whatever the config says: they can push as the repository or the human.
GITHUB_TOKEN_ENV = ("GITHUB_TOKEN", "GH_TOKEN", "GITMEM_GIT_TOKEN", "GITMEM_FLEET_TOKEN", "GH_ENTERPRISE_TOKEN",
                    "GITHUB_ENTERPRISE_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                    "ACTIONS_ID_TOKEN_REQUEST_URL")
# Words in a variable's name that say it holds a credential, and capabilities that are not named like one.
_SECRET_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "COOKIE")
# Whole words only: AUTHOR, PATH, BYPASS and COMPASS are no secrets. `…_PASS`, `…_PWD` (MySQL's MYSQL_PWD) and
# `…_CREDS` are how many deploy scripts name a password; the shell's working directory (PWD) is no password.
_SECRET_WORDS = ("AUTH", "PAT", "PASS", "PWD", "CREDS")
# Last words only: `…_PW` is a password (`LDAP_BIND_PW`, `DB_PW`); Playwright's settings start with it (`PW_TEST_…`).
_SECRET_LAST_WORDS = ("PW",)
# Glued to the end of another word too (`DBPASS`, `MYSQLPWD`, `SMTPPASS`): no English word ends in PWD, and the
# few that end in PASS are listed, so `BYPASS_CACHE` or `COMPASS_HOME` is no secret; a word that only starts
# with the letters (`PASSAGE`, `PASSENGER`) is judged whole, as above.
_GLUED_ENDS = ("PASS", "PWD")
_WORDS_ENDING_SO = frozenset({"BYPASS", "COMPASS", "ENCOMPASS", "SURPASS", "TRESPASS", "OVERPASS", "UNDERPASS",
                              "MULTIPASS", "OLDPWD"})
_SHELL_NAMES = ("PWD",)
_CAPABILITIES = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH_COMMAND",
                 "GIT_SSH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "NETRC", "DOCKER_CONFIG", "KUBECONFIG",
                 "GOOGLE_APPLICATION_CREDENTIALS", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
                 "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT",
                 "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
MIN_VALUE = 8            # shorter values are not worth replacing: they would hit ordinary words
MASK = "***"             # the one mark: in files the runner commits and in everything shown (see `scrub`)

# The escape hatch for fixtures and docs that hold key-shaped strings on purpose: one glob per line (`#` starts
# a comment), matched against repository paths; a line ending in `/` allows everything under that directory.
# It is a protected path (gitmem.agents.protected): an agent's edit of it never lands without the human.
ALLOWLIST_FILE = ".gitmem-allow-secrets"

_B = r"(?<![A-Za-z0-9_-])"       # not in the middle of a longer word


class Pattern:
    """A plain class, not a dataclass: this module is imported on the pre-commit path, where each
    dataclass costs a millisecond of code generation."""

    __slots__ = ("source", "what", "needles", "group", "_regex")

    def __init__(self, source: str, what: str, needles: tuple[bytes, ...], group: int = 0) -> None:
        self.source = source          # the regular expression, over bytes or text alike
        self.what = what              # what it looks like, for the message; the match itself is never shown
        self.needles = needles        # literal text it cannot match without
        self.group = group            # the part of a match that is the secret (the rest is its context)
        self._regex: re.Pattern[bytes] | None = None

    @property
    def regex(self) -> re.Pattern[bytes]:
        """Compiled on first use: most files hold none of the needles, and then no pattern is compiled."""
        if self._regex is None:
            self._regex = re.compile(self.source.encode())
        return self._regex

    def present(self, data: bytes) -> bool:
        return any(needle in data for needle in self.needles)


# The most lines of text one secret's match may stand on: the patterns that cross line breaks (`\s*` between a
# name, its `=` or `:`, and its value) take three, each on a line of its own, blank lines between.
LINES_A_SECRET_SPANS = 3


def _p(source: str, what: str, *needles: str, group: int = 0) -> Pattern:
    return Pattern(source, what, tuple(n.encode() for n in needles), group)


PATTERNS: tuple[Pattern, ...] = (
    _p(r"sk-ant-[A-Za-z0-9_\-]{16,}", "an Anthropic API key (sk-ant-…)", "sk-ant-"),
    _p(_B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{16,}", "an OpenAI API key", "sk-proj-", "sk-svcacct-",
       "sk-admin-", "sk-None-"),
    _p(_B + r"sk-[A-Za-z0-9]{32,}", "an OpenAI-style API key", "sk-"),
    _p(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b", "an AWS access key id", "AKIA", "ASIA", "ABIA", "ACCA",
       "A3T"),
    _p(r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
       "an AWS secret access key", "ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey", "ecretaccesskey",
       group=1),
    _p(r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _p(r"\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub fine-grained token", "github_pat_"),
    _p(r"\bgl(?:pat|dt|rt|ptt|soat|cbt|ffct|oas|imt|agent|ft|wt)-[A-Za-z0-9_\-]{20,}", "a GitLab token", "glpat-",
       "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glffct-", "gloas-", "glimt-", "glagent-", "glft-", "glwt-"),
    _p(r"\bGR1348941[A-Za-z0-9_\-]{20,}", "a GitLab runner registration token", "GR1348941"),
    _p(r"\bAIza[0-9A-Za-z_\-]{35}", "a Google API key", "AIza"),
    _p(r"\bGOCSPX-[A-Za-z0-9_\-]{24,}", "a Google OAuth client secret", "GOCSPX-"),
    _p(r"\bya29\.[0-9A-Za-z_\-]{20,}", "a Google OAuth access token", "ya29."),
    _p(r"(?<![A-Za-z0-9/])1//0[0-9A-Za-z_\-]{30,}", "a Google OAuth refresh token", "1//0"),
    _p(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", "a Slack token", "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-",
       "xoxe-"),
    _p(r"\bxoxe\.xox[bp]-[A-Za-z0-9\-]{10,}", "a Slack refresh token", "xoxe."),
    _p(r"\bxapp-[0-9]-[A-Za-z0-9\-]{10,}", "a Slack app token", "xapp-"),
    _p(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}", "a Slack webhook URL",
       "hooks.slack.com/"),
    _p(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "a Stripe secret key", "sk_live_", "sk_test_", "rk_live_",
       "rk_test_"),
    _p(r"\bwhsec_[A-Za-z0-9+/=]{24,}", "a Stripe webhook secret", "whsec_"),
    _p(r"\bhf_[A-Za-z0-9]{30,}", "a Hugging Face token", "hf_"),
    _p(r"\bapi_org_[A-Za-z0-9]{30,}", "a Hugging Face organisation token", "api_org_"),
    _p(r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token", "npm_"),
    _p(r"_authToken\s*=\s*(?!\$\{)([A-Za-z0-9_\-.+/=]{16,})", "an npm registry token", "_authToken", group=1),
    _p(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", "a PyPI token", "pypi-AgE"),
    _p(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", "a private key", "PRIVATE KEY"),
    _p(r"\bSG\.[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{40,}", "a SendGrid API key", "SG."),
    _p(r"\bdo[por]_v1_[a-f0-9]{64}\b", "a DigitalOcean token", "dop_v1_", "doo_v1_", "dor_v1_"),
    _p(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "a Shopify token", "shpat_", "shpca_", "shppa_", "shpss_"),
    _p(r"\bgsk_[A-Za-z0-9]{40,}", "a Groq API key", "gsk_"),
    _p(r"\bxai-[A-Za-z0-9]{60,}", "an xAI API key", "xai-"),
    _p(r"\br8_[A-Za-z0-9]{30,}", "a Replicate token", "r8_"),
    _p(r"\bpplx-[A-Za-z0-9]{40,}", "a Perplexity API key", "pplx-"),
    _p(r"\blin_api_[A-Za-z0-9]{40}\b", "a Linear API key", "lin_api_"),
    _p(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "a Postman API key", "PMAK-"),
    _p(r"\bATATT3[A-Za-z0-9_\-=]{100,}", "an Atlassian API token", "ATATT3"),
    _p(r"\bdapi[a-f0-9]{32}\b", "a Databricks token", "dapi"),
    _p(r"\bsntry[su]_[A-Za-z0-9+/=_\-]{40,}", "a Sentry token", "sntrys_", "sntryu_"),
    _p(r"(?i:AccountKey)=[A-Za-z0-9+/]{80,}={0,2}", "an Azure storage account key", "AccountKey="),
)
# Redaction is wider than detection: an Anthropic key prefix is removed from messages whatever follows it.
_REDACT_ONLY = (_p(r"sk-ant-[A-Za-z0-9_\-]+", "", "sk-ant-"),)
# Files: a private key is masked whole, from its BEGIN line to its END line (or, with no END, its base64 lines).
_KEY_HEAD = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PRIVATE_BLOCKS = (
    _p(_KEY_HEAD + r"[\s\S]{0,65536}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", "", "PRIVATE KEY"),
    _p(_KEY_HEAD + r"(?:\r?\n(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: .*))*", "", "PRIVATE KEY"),
)


_REDACTORS = (*_PRIVATE_BLOCKS, *_REDACT_ONLY, *PATTERNS)
# The widest a private key block is masked across (the BEGIN..END pattern's gap, and its two lines).
KEY_BLOCK_BYTES = 65536 + 256
# Where a text read in pieces with gaps between them (a sparse file's runs of data) resumed inside a private key
# block: this line put before the next piece makes the block's rest (its base64 lines, its END line) masked as
# the block's, and the mask replaces it too.
KEY_RESUMED = b"-----BEGIN PRIVATE KEY-----\n"


@cache
def _key_lines() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    return re.compile(_KEY_HEAD.encode()), re.compile(rb"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


def ends_in_private_key(tail: bytes) -> bool:
    """Whether text whose last KEY_BLOCK_BYTES are `tail` ends inside a private key block: its last BEGIN line has
    no END line after it."""
    head, end = _key_lines()
    starts = [found.end() for found in head.finditer(tail)]
    return bool(starts) and end.search(tail, starts[-1]) is None
# A URL's password (`postgres://app:PASSWORD@db`, `https://me:PASSWORD@host`), the rest of the URL kept readable:
# masked only in text another tool's memory brings into gitmem's (`redact(..., passwords=True)`). Not in
# every file a cycle commits: a project's code holds development URLs (`postgres://postgres:postgres@db`) that
# masking would break; and not a GM903 finding, as a password has no shape of its own.
_URL_PASSWORD = _p(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*:([^\s/?#@]+)@", "", "://", group=1)
# A password given as an assignment in notes (`password: hunter2`, `DB_PASSWD=…`, `"pwd": "…"`, `secret: …`),
# masked where URL passwords are, for the same reasons. The key is a word that names one, alone or as the last or
# first part of a longer name (`db_password`, `secret_key`), in any case, quoted or in bold (`**password**:`);
# the value is one word. After `=`, or quoted, it is always a value; after a bare `:`, only where the word ends
# its line or clause (`,` `;` `)`): prose runs on after a colon ("the password: it rotates weekly"), and
# "reset your password" assigns nothing.
# Not a value: a boolean or null, a placeholder (`$VAR`, `${VAR}`, `<password>`, `%s`, `***`), a path (`pwd: /srv`).
_PASSWORD_KEY = (r"(?<![A-Za-z0-9])(?i:(?:[a-z0-9]+[_.\-])*(?:password|passwd|passphrase|pwd|secret)s?"
                 r"(?:[_.\-][a-z0-9]+)*)[\"'*_`]{0,2}[ \t]*")
_NOT_A_VALUE = r"(?!(?i:true|false|yes|no|on|off|null|none|nil)(?![^\s,;)\"'])|[$<{%*/~])"
_PASSWORD_NEEDLES = tuple(case(word) for word in ("password", "passwd", "passphrase", "pwd", "secret")
                          for case in (str.lower, str.upper, str.capitalize))
_PASSWORD_ASSIGNMENTS = (
    _p(_PASSWORD_KEY + r"[:=][ \t]*[\"']" + _NOT_A_VALUE + r"([^\"'\r\n]+)[\"']", "", *_PASSWORD_NEEDLES, group=1),
    _p(_PASSWORD_KEY + r"=[ \t]*" + _NOT_A_VALUE + r"([^\s'\"`,;]+)", "", *_PASSWORD_NEEDLES, group=1),
    _p(_PASSWORD_KEY + r":[ \t]*" + _NOT_A_VALUE + r"([^\s'\"`,;]+)(?=[ \t]*(?:[,;)\]}]|\r?\n|\Z))", "",
       *_PASSWORD_NEEDLES, group=1),
)
# What `redact(..., passwords=True)` masks besides every secret-like token: a password by its place in the text.
_PASSWORDS = (_URL_PASSWORD, *_PASSWORD_ASSIGNMENTS)


def find_secrets(data: bytes) -> list[tuple[int, str]]:
    """(offset, what it looks like) of every secret-like token in `data`, in order."""
    found: list[tuple[int, str]] = []
    for pattern in PATTERNS:
        if pattern.present(data):
            found += [(match.start(pattern.group), pattern.what) for match in pattern.regex.finditer(data)]
    return sorted(found)


def env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every value the environment holds that an agent is not given, whatever its variable is called, in the
    forms it can be written in (as is, without the spaces or quotes around it, line by line, URL-encoded,
    base64): what the runner masks in everything it commits and prints. A value is masked when its variable is
    withheld from an agent (`withheld_values`), and it is `secret_shaped`; values the agent was given are its
    own and stay (the names `agent.pass_env` lets through are withheld by name, so the model's key is masked
    too). Longest first, so a URL holding a password is masked whole."""
    environ = os.environ if environ is None else environ
    key = tuple(environ.items())
    cached = _ENV_CACHE.get(id(environ))
    if cached is not None and cached[0] == key:
        return cached[1]
    held = withheld_values(environ)
    values = sorted(dict.fromkeys(part for value in held for part in _masked_parts(value)), key=len, reverse=True)
    found = list(dict.fromkeys([*values, *(form for value in values for form in _encoded(value)
                                           if len(form) >= MIN_VALUE)]))
    _ENV_CACHE.clear()
    _ENV_CACHE[id(environ)] = (key, found)
    return found


_ENV_CACHE: dict[int, tuple[tuple[tuple[str, str], ...], list[str]]] = {}


def _masked_parts(value: str) -> list[str]:
    """What of a withheld value is masked: the value without the line end, spaces or quotes around it (a secret
    pasted into a CI settings page or a .env file often keeps them, and a tool writes it without them: `curl -u
    me:VALUE`; masking them too would eat the line end after it), or the value whole when that core is no secret
    alone (a quoted number); and for a value of several lines each of its lines so, since the tools that carry
    one (a key, a certificate bundle) rewrite it line by line (a YAML block's indent, CRLF, a Markdown quote)."""
    whole = _core(value)
    lines = [_core(line) for line in whole.splitlines()] if len(whole.splitlines()) > 1 else []
    return [whole if secret_shaped(whole) else value, *(line for line in lines if secret_shaped(line))]


def _core(value: str) -> str:
    core = value.strip()
    while len(core) >= 2 and core[0] == core[-1] and core[0] in "\"'":
        core = core[1:-1].strip()
    return core


def withheld_values(environ: Mapping[str, str]) -> list[str]:
    """The secret-shaped values of the variables `agent_environment` withholds from an agent (passing none): those
    named like a credential (`is_secret_name`), those whose value looks like a key or token, and those whose
    value holds one of the first kind's values (a database URL with the password in it)."""
    named = [value for name, value in environ.items() if is_secret_name(name) and secret_shaped(value)]
    held = [value for name, value in environ.items() if not is_secret_name(name) and secret_shaped(value)
            and _holds(value, named)]
    return list(dict.fromkeys([*named, *held]))




@cache
def _number() -> re.Pattern[str]:
    """A number as `secret_shaped` reads one; compiled on first use (only withheld values are judged)."""
    return re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


def secret_shaped(value: str) -> bool:
    """Whether a withheld value is worth masking wherever it appears: at least MIN_VALUE characters, and not a
    number (ASCII digits, with a sign, a decimal point or an exponent), a boolean (BOOLEANS, any case) or a path
    (every `:`-separated part starts with `/` or `~`, holds no whitespace and exists: SSH_AUTH_SOCK's socket,
    KUBECONFIG's file). A value that only looks like a path (a base64 key can start with `/`) names nothing
    that exists, so it is masked. Masking the others would scar ordinary text: `/usr/bin`, `8080`, `true`."""
    text = value.strip()
    if len(text) < MIN_VALUE or text.lower() in BOOLEANS or _number().fullmatch(text):
        return False
    parts = [part for part in text.split(":") if part]
    return not (parts and all(_is_existing_path(part) for part in parts))


def _is_existing_path(part: str) -> bool:
    if not part.startswith(("/", "~")) or any(c.isspace() for c in part):
        return False
    try:
        return os.path.lexists(os.path.expanduser(part))
    except (OSError, ValueError):        # a NUL, or a name too long: not a path
        return False


def _encoded(value: str) -> list[str]:
    """The forms a value takes when a tool writes it encoded: URL-encoded (upper- and lower-case escapes, `+`
    for a space), hex (either case), as a JSON string (`\\"`, `\\t`, `\\u00e4`), HTML-escaped (`&amp;`), and
    base64 (standard and URL-safe) at each of the three alignments it can have in a longer text (whole 3-byte
    groups only, so the form is the same whatever surrounds it), as Python's repr of its bytes shows it (each
    byte that is no printable ASCII as `\\xNN`: `os.environb`, a bytes value in a log), and as the shell quotes
    it with backslashes (`_shell_quoted`); base32 (upper- and lower-case) at each of its five alignments; and in
    Unicode's composed and decomposed forms (macOS file names and some editors write `ä` as `a` and a combining
    mark). Base64 or base32 wrapped over lines (the tools fold at 76) is caught by `_wrapped`, a value of several
    words wrapped at its blanks by `_folded`.

    Not known, on purpose: forms only an agent set on hiding a value writes (reversed, cut in pieces, XORed or
    encrypted with a key of its choosing). No list of forms can end that game; withholding the value from the
    agent (the sandbox's own PID namespace hides the runner's environ) is the defence."""
    import base64
    import html
    import json
    import unicodedata
    from urllib.parse import quote, quote_plus

    data = _raw(value)                  # the bytes a tool encodes, UTF-8 or not
    escaped = [quote(data, safe=""), quote(data), quote_plus(data, safe="")]
    forms = [*escaped, *(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), form) for form in escaped),
             data.hex(), data.hex().upper(),
             data.decode("utf-8", "backslashreplace"),      # how a value that is no UTF-8 is shown (`\xe4`)
             repr(data)[2:-1],                              # as Python shows bytes: `p\xc3\xa4ss`, `\'`, `\\`
             *(json.dumps(value, ensure_ascii=only)[1:-1] for only in (True, False)),   # a JSON string's escapes
             *(html.escape(value, quote=quote_too) for quote_too in (True, False)),      # HTML's and XML's
             _shell_quoted(value)]
    for offset in range(3):
        whole = data[offset:offset + 3 * ((len(data) - offset) // 3)]
        forms += [base64.b64encode(whole).decode(), base64.urlsafe_b64encode(whole).decode()]
    for offset in range(5):             # base32 (TOTP seeds, `base32`), whole 5-byte groups, in either case
        whole = data[offset:offset + 5 * ((len(data) - offset) // 5)]
        forms += [base64.b32encode(whole).decode(), base64.b32encode(whole).decode().lower()]
    forms += [unicodedata.normalize(form, value) for form in ("NFC", "NFD")]   # as an editor or a file system
    return [form for form in dict.fromkeys(forms) if form != value]


# The characters bash's `printf %q` (how scripts log the command they run) puts a backslash before; `~` and `#`
# only at the start of a word.
_SHELL_SPECIAL = frozenset(" '\"\\|&;()<>!{}*[]?^$`,")


def _shell_quoted(value: str) -> str:
    """`value` as the shell's backslash quoting writes it: `p@ss\\ w0rd\\!` (`printf %q`, `ls -b`)."""
    return "".join("\\" + char if char in _SHELL_SPECIAL or (not at and char in "~#") else char
                   for at, char in enumerate(value))


# Lines of base64 (or any one-word lines) in a row: a value folded over them is masked with the whole run.
@cache
def _wrapped() -> re.Pattern[bytes]:
    """Compiled on first use: only text that holds a withheld value is searched."""
    return re.compile(rb"(?:^[A-Za-z0-9+/=_-]{2,}\r?\n)+[A-Za-z0-9+/=_-]*", re.MULTILINE)


def _unwrapped(data: bytes, values: list[bytes], mark: bytes) -> bytes:
    """`data` with each run of `_wrapped` lines that holds a value once its line breaks are gone replaced by
    `mark` (and its last line break kept)."""
    def mask(match: re.Match[bytes]) -> bytes:
        run = match.group(0)
        joined = run.replace(b"\r", b"").replace(b"\n", b"")
        if not any(value in joined for value in values):
            return run
        return mark + (b"\n" if run.endswith(b"\n") else b"")
    if b"\n" not in data:
        return data
    joined = data.replace(b"\r", b"").replace(b"\n", b"")       # at memory speed: most texts stop here
    return _wrapped().sub(mask, data) if any(value in joined for value in values) else data


# What text wrapping writes between two words of a value: blanks, or a line break with the next line's indent and
# Markdown quote marks (a paragraph hard-wrapped by an editor or `fmt`, a list item's continuation, a quote).
_FOLD = rb"(?:[ \t]*\r?\n[ \t]*(?:>[ \t]*)*|[ \t]+)"


@cache
def _folded(value: bytes) -> re.Pattern[bytes] | None:
    """A value of several words as wrapped text may hold it: each run of blanks in it may be any run of blanks, or
    a line break (`_FOLD`); None for a value of one word."""
    words = value.split()
    if len(words) < 2:
        return None
    return re.compile(_FOLD.join(re.escape(word) for word in words))


def _folds(data: bytes, values: list[bytes]) -> list[re.Pattern[bytes]]:
    """The `_folded` form of each value of several words whose first word `data` holds."""
    return [pattern for value in values if (pattern := _folded(value)) is not None and value.split()[0] in data]


def _masker(mark: bytes, group: int) -> Callable[[re.Match[bytes]], bytes]:
    def mask(match: re.Match[bytes]) -> bytes:
        if not group:
            return mark
        whole, start, end = match.group(0), match.start(group) - match.start(), match.end(group) - match.start()
        return whole[:start] + mark + whole[end:]
    return mask


def _value_bytes(values: Iterable[str]) -> list[bytes]:
    """The bytes each value (of at least MIN_VALUE characters) is found as. A value that is no UTF-8 comes from
    os.environ with its undecodable bytes as lone surrogates: in a file or a stream it is those raw bytes
    (`surrogateescape`), and in text `redact` encodes it as the text is (`surrogatepass`)."""
    return list(_value_bytes_of(tuple(values)))


@lru_cache(maxsize=32)
def _value_bytes_of(values: tuple[str, ...]) -> tuple[bytes, ...]:
    """`_value_bytes`, kept: `scrub_data` masks every string of a view with the environment's same forms (dozens
    of them, each encoded twice), and encoding them again for each string was most of its cost."""
    return tuple(dict.fromkeys(form for value in values if value and len(value) >= MIN_VALUE
                               for form in (_raw(value), value.encode("utf-8", "surrogatepass"))))


def _raw(value: str) -> bytes:
    """The bytes a value of os.environ was made from."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:          # a surrogate no undecodable byte stands for: only its text form exists
        return value.encode("utf-8", "surrogatepass")


def _values_masked(data: bytes, values: list[bytes], mark: bytes) -> bytes:
    """`data` with each value replaced by `mark`: as written, folded over lines as one word (`_unwrapped`), and
    wrapped at its blanks (`_folded`)."""
    for value in values:
        data = data.replace(value, mark)
    if values:
        data = _unwrapped(data, values, mark)
        for pattern in _folds(data, values):
            data = pattern.sub(mark, data)
    return data


def mask_values(text: str, values: Iterable[str]) -> str:
    """`text` with only `values` masked, in every form `redact` masks them in; a secret-like token is left for the
    checks to refuse (GM903), not hidden."""
    data = text.encode("utf-8", "surrogatepass")
    clean = _values_masked(data, _value_bytes(values), MASK.encode())
    return text if clean == data else clean.decode("utf-8", "surrogatepass")


# Display masks every string of a view alone (`scrub_data`): most are short and hold no needle, and asking each of
# the redactors' 80 needles in turn cost 30 µs a string (20,000 imported facts: seconds). One search for any of them
# answers that at once; over a long text the needles one by one are faster (each a C scan), so only short ones ask.
_SHORT = 4096


@cache
def _any_needle() -> re.Pattern[bytes]:
    needles = sorted({needle for pattern in _REDACTORS for needle in pattern.needles}, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(needle) for needle in needles))


def redact_bytes(data: bytes, extra_values: Iterable[str] = ()) -> bytes:
    """`data` with the secret values and the secret-like tokens replaced by MASK; other bytes kept exactly."""
    token = MASK.encode()
    data = _values_masked(data, _value_bytes(extra_values), token)
    if len(data) <= _SHORT and _any_needle().search(data) is None:
        return data             # no redactor can match without one of its needles
    for pattern in _REDACTORS:
        if pattern.present(data):
            data = pattern.regex.sub(_masker(token, pattern.group), data)
    return data


def redact(text: str, extra_values: Iterable[str | None] = (), *, passwords: bool = False) -> str:
    """`text` with every secret-like token and every value in `extra_values` (only those: a caller holding
    another environment, or the environment's values already) replaced by MASK, and with `passwords` every
    URL's password and every password assignment (`password: hunter2`) too; other characters kept exactly, lone
    surrogates included. For what is shown, `scrub`."""
    if not text:
        return text
    values = [value for value in extra_values if value]
    data = text.encode("utf-8", "surrogatepass")
    clean = redact_bytes(data, values)
    for pattern in _PASSWORDS if passwords else ():
        if pattern.present(clean):
            clean = pattern.regex.sub(_masker(MASK.encode(), pattern.group), clean)
    return text if clean == data else clean.decode("utf-8", "surrogatepass")


def scrub(text: str, extra_values: Iterable[str | None] = ()) -> str:
    """Text as it may be shown to a human or an agent, or kept in a message, a log or a file: MASK for every
    secret-like token, every secret value of the environment (`env_values`: they may be in history from
    before their shape was known) and every value in `extra_values` (a client's API key). The one masking
    for display: every command's output and messages, the cycle context, the MCP tools, recall, the report,
    the fleet, error text. What it returns can always be written as UTF-8: a lone surrogate (a file name's
    undecodable byte) becomes `?`, so no stream or file it goes to fails on it."""
    return _scrubbed(text, [*extra_values, *env_values()])


def _scrubbed(text: str, values: list[str | None]) -> str:
    """`scrub` with the values to mask already gathered."""
    shown = redact(text, values)
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:
        return shown.encode("utf-8", "replace").decode("utf-8")
    return shown


def scrub_data(value: Any) -> Any:
    """A JSON-shaped value (dicts, lists, strings, numbers) with every string in it, keys too, `scrub`bed: what
    `--json` prints, masked before it is encoded (an encoded string escapes what the raw value holds). The
    environment's values are gathered once for the whole value: per string, reading the environment again cost
    `status` minutes over a RULES.md of many lines."""
    values: list[str | None] = list(env_values())

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _scrubbed(item, values)
        if isinstance(item, dict):
            return {walk(key): walk(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return walk(value)


def holds_secret(text: str) -> bool:
    """Whether `text` (a file name, a link target, a value) holds a secret-like token or a secret env value."""
    return _holds(text, env_values())


def _holds(text: str, values: Iterable[str]) -> bool:
    data = text.encode("utf-8", "surrogatepass")
    return redact_bytes(data, values) != data


def wide_codec(head: bytes) -> str | None:
    """The codec of a UTF-16 or UTF-32 text from its first bytes (a byte order mark, or NULs in all but one byte
    of each code unit), so a key in such a file is found and masked like any other; None for anything else.
    UTF-32 is asked first: its little-endian byte order mark begins with UTF-16's."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    sample = head[:4096]
    for width, codec in ((4, "utf-32"), (2, "utf-16")):
        if len(sample) < 4 * width:
            continue
        units = len(sample) // width
        nuls = [sample[at::width][:units].count(0) for at in range(width)]
        for text_at, order in ((0, "le"), (width - 1, "be")):
            if nuls[text_at] < 0.1 * units and all(nuls[at] >= 0.9 * units for at in range(width) if at != text_at):
                return f"{codec}-{order}"
    return None


def as_utf8(data: bytes) -> bytes:
    """`data`, re-encoded as UTF-8 when it is UTF-16 or UTF-32 text (the form the patterns read)."""
    codec = wide_codec(data)
    if codec is None:
        return data
    return data.decode(codec, "replace").encode("utf-8", "surrogatepass")


# -- streaming: files of any size ---------------------------------------------------------------------------
CHUNK = 1 << 20          # bytes read at a time
KEEP = 1 << 17           # bytes held back so a secret is never cut in two (a private key block, an env value)


def redact_stream(source: BinaryIO, sink: BinaryIO, extra_values: Iterable[str] = ()) -> bool:
    """Copy `source` to `sink` with every secret masked, in bounded memory; True when anything was masked.

    Text is cut at least KEEP bytes before the end of what was read, at a line end where there is one, and
    never inside a token, an environment value or a private key block: the part a match would straddle waits
    for the next read.
    """
    texts = [value for value in extra_values if value and len(value) >= MIN_VALUE]
    values = _value_bytes(texts)
    keep = max([KEEP, *(2 * len(value) for value in values)])
    held, changed = b"", False
    while True:
        chunk = source.read(CHUNK)
        held += chunk
        if chunk and len(held) <= keep + CHUNK:
            continue
        cut = len(held) if not chunk else _cut_at(held, len(held) - keep, values)
        part = held[:cut]
        clean = redact_bytes(part, texts)
        changed = changed or clean != part
        sink.write(clean)
        held = held[cut:]
        if not chunk:
            return changed


def _cut_at(data: bytes, limit: int, values: list[bytes]) -> int:
    line = data.rfind(b"\n", 0, limit)
    # With no line end, cut after a space: a cut inside a word would start the next part with what looks like a
    # token's start (`ghp_sk-proj-…` cut after `ghp_`), which the whole text does not mask.
    space = max(data.rfind(b" ", 0, limit), data.rfind(b"\t", 0, limit))
    cut = line + 1 if line >= 0 else space + 1 if space >= 0 else 0
    while cut > 0:
        start = _straddling(data, cut, values)
        if start is None:
            return cut
        cut = start
    # A match, or one word, runs from the start of what is held past the cut: wait for more, up to a bound; a
    # match longer than that is cut (its first part is still masked, so what is left of it is no secret).
    return 0 if len(data) < 8 * KEEP else limit


def _straddling(data: bytes, cut: int, values: list[bytes]) -> int | None:
    """The start of the first secret-like match or value in `data` that begins before `cut` and ends after it."""
    low = max(0, cut - KEEP)
    window = data[low:cut + KEEP]
    at = cut - low
    starts = [low + found for value in values
              for found in [window.rfind(value, max(0, at - len(value) + 1), at + len(value) - 1)]
              if 0 <= found < at]
    for pattern in _REDACTORS:
        if pattern.present(window):
            starts += [low + m.start() for m in pattern.regex.finditer(window) if m.start() < at < m.end()]
    if values:
        starts += [low + m.start() for m in _wrapped().finditer(window) if m.start() < at < m.end()]
        starts += [low + m.start() for fold in _folds(window, values) for m in fold.finditer(window)
                   if m.start() < at < m.end()]
    return min(starts) if starts else None


# -- the environment an agent gets ----------------------------------------------------------------------------

def is_secret_name(name: str) -> bool:
    """An environment variable that, by its name, holds a credential or a capability to act as someone."""
    upper = name.upper()
    if upper in _SHELL_NAMES:
        return False
    if upper in SECRET_ENV or upper in GITHUB_TOKEN_ENV or upper in _CAPABILITIES:
        return True
    words = re.split(r"[^A-Z0-9]+", upper)
    return (any(part in upper for part in _SECRET_PARTS) or bool(set(words) & set(_SECRET_WORDS))
            or words[-1] in _SECRET_LAST_WORDS
            or any(word.endswith(_GLUED_ENDS) and word not in _WORDS_ENDING_SO for word in words))


def never_passed(name: str) -> bool:
    """GitHub tokens never reach an agent, even when the config names them."""
    return name.upper() in GITHUB_TOKEN_ENV


def agent_environment(environ: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """`environ` without tokens, keys or credentials, except the variables named in `passed` (the config's
    `agent.pass_env`, e.g. the model's API key). A value that looks like a GitHub token never passes, under any
    name; nor does any other secret-looking value the config did not name, nor a value holding the value of a
    withheld variable (a URL with the database password in it)."""
    allowed = {name for name in passed if not never_passed(name)}
    github_values = {environ[name] for name in GITHUB_TOKEN_ENV if environ.get(name)}
    named = [value for name, value in environ.items() if is_secret_name(name) and secret_shaped(value)]
    kept: dict[str, str] = {}
    for name, value in environ.items():
        if value in github_values or _looks_like_github_token(value):
            continue
        if name in allowed or not (is_secret_name(name) or _holds(value, named)):
            kept[name] = value
    return kept


def _looks_like_github_token(value: str) -> bool:
    data = value.encode("utf-8", "surrogatepass")
    return any(pattern.regex.search(data) for pattern in PATTERNS
               if pattern.what.startswith("a GitHub") and pattern.present(data))


# -- the allowlist ----------------------------------------------------------------------------------------------

class Allowlist:
    """Paths where GM903 accepts key-shaped strings on purpose (fixtures, docs). Empty: nothing is allowed."""

    def __init__(self, globs: tuple[str, ...] = ()) -> None:
        self.globs = globs

    @classmethod
    def parse(cls, data: bytes | None) -> Allowlist:
        if not data:
            return cls()
        lines = data.decode("utf-8", "replace").splitlines()
        return cls(tuple(g for line in lines if (g := line.split("#", 1)[0].strip())))

    def allows(self, path: str) -> bool:
        from fnmatch import fnmatchcase

        for glob in self.globs:
            glob = glob.lstrip("/")
            if glob.endswith("/") and path.startswith(glob):
                return True
            if fnmatchcase(path, glob) or ("/" not in glob and fnmatchcase(path.rsplit("/", 1)[-1], glob)):
                return True
        return False
