"""One masking for display (`gitmem.secrets.scrub`, one mark): an environment secret's value that LOG history
already holds is never printed by `gitmem status`, `gitmem context` (the cycle context), the MCP context,
status and resource answers, nor the session-start context; and the one function keeps the behaviours that won
where the old copies differed (the mark, text kept exactly, the environment always masked)."""
from __future__ import annotations

import json

import pytest

from gitmem import secrets
from gitmem.config import load_config
from gitmem.cycle.budget import build_request
from gitmem.errors import ExitCode
from gitmem.sessions.context import session_context
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo
from tests.support.mcp_client import call, converse, read
from tests.support.recall_support import History

SECRET = "qZ4vN8tLw2Xc7RbK5mJd"          # no known token shape: only the environment says it is a secret
NAME = "HERON_DEPLOY_PASSWORD"              # a name gitmem.secrets.is_secret_name marks secret


@pytest.fixture
def history(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> History:
    history = History(memrepo)
    history.cycle(task="tidy the heron dashboards", result="moved the latency graphs to the front")
    # Written before the variable was set (hand-edited, committed without the hook): history keeps it.
    history.cycle(task=f"rotate heron login to {SECRET}", result=f"the heron deploy now logs in with {SECRET}",
                  did=f"rotated the heron login to {SECRET}")
    monkeypatch.setenv(NAME, SECRET)
    assert secrets.is_secret_name(NAME)
    assert SECRET in history.repo.read("LOG.md") and SECRET in history.repo.read("NOW.md")
    return history


def test_status_never_prints_an_environment_secret_in_history(history: History, cli) -> None:
    for args in (["status"], ["status", "--json"]):
        result = cli(args, cwd=history.root)
        assert result.code == ExitCode.OK, result.err
        assert SECRET not in result.out and SECRET not in result.err, args
    shown = cli(["status", "--json"], cwd=history.root).out
    assert secrets.MASK in shown, "the entry is still shown, masked"
    json.loads(shown)


def test_the_cycle_context_never_holds_an_environment_secret_in_history(history: History, cli) -> None:
    for args in (["context", "--offline"], ["context", "--offline", "--json"]):
        result = cli(args, cwd=history.root)
        assert result.code == ExitCode.OK, result.err
        assert SECRET not in result.out and secrets.MASK in result.out, args
        assert "heron" in result.out
    # What the agent itself reads in a cycle is the same request.
    request = build_request(Workspace.at(history.root, load_config(history.root)), backend="command")
    assert SECRET not in request.prompt_text() and secrets.MASK in request.prompt_text()


def test_the_session_start_context_never_holds_it(history: History) -> None:
    text = session_context(Workspace.at(history.root, load_config(history.root)))
    assert "heron" in text and SECRET not in text and secrets.MASK in text


def test_the_mcp_context_status_and_resources_never_hold_it(history: History) -> None:
    seen = converse([call("context", {}), call("context", {"full": True}), call("status", {}),
                     read("gitmem://now")], cwd=history.root, env={NAME: SECRET})
    assert len(seen.answers) == 4
    texts = [answer if isinstance(answer, str) else answer.text for answer in seen.answers]    # a resource: its text
    assert not any(answer.is_error for answer in seen.answers if not isinstance(answer, str)), texts
    for text in texts:
        assert SECRET not in text and secrets.MASK in text


def test_an_error_message_masks_it(history: History, cli) -> None:
    """Every command's messages pass through `say`, which masks: here a config error quoting the value."""
    history.repo.write("gitmem.yaml", f"limits:\n  now_block_lines: {SECRET}\n")
    result = cli(["status"], cwd=history.root)
    assert result.code == ExitCode.USAGE
    assert SECRET not in result.err + result.out and "got '***'" in result.err


def test_a_bugs_traceback_masks_it(history: History, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug prints its traceback (exit 70), and an exception's message can quote what it was working on: the
    traceback was printed as it was, the value in it."""
    from gitmem.views import status

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError(f"cannot read the entry 'rotate heron login to {SECRET}'")

    monkeypatch.setattr(status, "collect_status", broken)
    result = cli(["status"], cwd=history.root)
    assert result.code == ExitCode.INTERNAL and "Traceback" in result.err, result.err
    assert SECRET not in result.err and "ValueError: cannot read the entry 'rotate heron login to ***'" in result.err


def test_a_traceback_that_cannot_be_masked_quotes_nothing(history: History, cli,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.views import status

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError(f"cannot read {SECRET}")

    def no_masking(*args: object, **kwargs: object) -> str:
        raise UnicodeEncodeError("utf-8", "x", 0, 1, "a masking bug")

    monkeypatch.setattr(status, "collect_status", broken)
    monkeypatch.setattr(secrets, "scrub", no_masking)
    result = cli(["status"], cwd=history.root)
    assert result.code == ExitCode.INTERNAL and SECRET not in result.err, result.err
    assert "ValueError, then UnicodeEncodeError while masking its traceback" in result.err


def test_the_violations_under_an_error_mask_it(history: History, cli) -> None:
    """A refused write lists the problems it found, and a problem may quote memory: a malformed heading written
    before the variable was set."""
    history.repo.append("DECISIONS.md", f"\n### D-45 · {SECRET} broken\n")
    result = cli(["decision", "ask", "--title", "t", "--recommendation", "r"], cwd=history.root)
    assert result.code == ExitCode.VIOLATIONS and "GM208" in result.err, result.err
    assert SECRET not in result.err + result.out and "D-45 · *** broken" in result.err


def test_one_mark_text_kept_exactly_and_the_environment_always_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, SECRET)
    token = "ghp_" + "A1b2C3d4" * 5
    # A lone surrogate (a file name's undecodable byte): `redact` keeps it (files are written back with
    # surrogatepass); what is shown can always be written as UTF-8, as the old `scrub` made it.
    assert secrets.scrub(f"caf\udce9 {token} {SECRET}") == "caf? *** ***"
    assert secrets.redact(f"caf\udce9 {token}") == "caf\udce9 ***"
    # The old `redact` masked the environment only when a caller remembered to pass it, with "[redacted]".
    assert secrets.scrub(f"logs in with {SECRET}") == "logs in with ***"
    assert secrets.redact(f"logs in with {SECRET}") == f"logs in with {SECRET}", "redact: the values given only"
    assert not hasattr(secrets, "REDACTED")
    plain = "nothing secret here"
    assert secrets.scrub(plain) is plain
    assert secrets.scrub_data({"a": [SECRET, 3, None], SECRET: {"b": (token,)}}) == {
        "a": ["***", 3, None], "***": {"b": ["***"]}}


def test_pending_never_prints_it(history: History, cli) -> None:
    history.memory.ask_decision(title=f"Keep the heron login {SECRET}?", recommendation=f"rotate {SECRET} weekly")
    history.commit("ask")
    for args in (["pending"], ["pending", "--json"]):
        result = cli(args, cwd=history.root)
        assert result.code == ExitCode.OK, result.err
        assert "heron" in result.out and SECRET not in result.out and secrets.MASK in result.out, args


def test_config_never_prints_it(history: History, cli) -> None:
    config = history.repo.read("gitmem.yaml")
    assert "gitmem-agent" in config
    history.repo.write("gitmem.yaml", config.replace("gitmem-agent", SECRET, 1))
    for args in (["config"], ["config", "agent"], ["config", "agent.name"]):
        result = cli(args, cwd=history.root)
        assert result.code == ExitCode.OK, result.err
        assert SECRET not in result.out and secrets.MASK in result.out, args


def test_the_job_summary_and_outputs_are_masked(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.cli.common import append_env_file

    summary = tmp_path / "summary.md"
    monkeypatch.setenv(NAME, SECRET)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    append_env_file("GITHUB_STEP_SUMMARY", f"- **Pull request not opened: remote said {SECRET}**\n\n")
    assert summary.read_text(encoding="utf-8") == "- **Pull request not opened: remote said *****\n\n"


def test_outside_text_is_shown_masked_then_escaped_by_one_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report, the fleet, the MCP server's notes and the cycle's notes on the agent all show outside text
    through `masked_printable`: a secret masked and a terminal escape shown, whichever comes first in the text."""
    from gitmem.memory.display import masked_printable

    monkeypatch.setenv(NAME, SECRET)
    assert masked_printable(f"\x1b]52;c;{SECRET}\x07 and \u202e{SECRET}") == "\\u001b]52;c;***\\u0007 and \\u202e***"
    plain = "nothing to hide"
    assert masked_printable(plain) == plain


def test_a_urls_password_is_masked_in_what_an_import_brings_and_a_projects_dev_url_is_left_alone() -> None:
    """The password of a URL's user part has no token shape: masked by its place in text another tool's memory
    brings in, the rest of the URL kept. A file a cycle commits keeps its development URL as written (masking
    would break the project's code), and whether a variable is withheld from an agent stays as it was."""
    url = "postgres://app:Tr0ub4dor-and-3@db.internal:5432/prod"
    masked = "db is postgres://app:***@db.internal:5432/prod, ok"
    assert secrets.redact(f"db is {url}, ok", passwords=True) == masked
    assert secrets.redact("https://me:pass@host/a.git and ssh://git@host:22/x and http://[::1]:8080/",
                          passwords=True) == "https://me:***@host/a.git and ssh://git@host:22/x and http://[::1]:8080/"
    dev = b"DATABASE_URL=postgres://postgres:postgres@localhost:5432/app\n"
    assert secrets.redact_bytes(dev) == dev and secrets.redact(dev.decode()) == dev.decode()
    environ = {"DATABASE_URL": url, "HOME": "/root"}
    assert secrets.agent_environment(environ) == environ


def test_the_pull_requests_title_and_body_mask_it(history: History, cli, tmp_path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Pull-request mode words its PR from LOG: the title is the latest entry's task, the body its task and
    result and the commit subjects. They went to GitHub as written, where the PR page shows them to everyone who
    can read the repository."""
    from tests.support.cycle_support import origin_and_clone
    from tests.support.fake_github import FakeGitHub
    from tests.support.gitcli import git

    written = history.repo.head()
    git(history.root, "reset", "-q", "--hard", "HEAD~1")         # the entry holding it lands on the memory branch
    origin_and_clone(tmp_path, history.repo)
    with FakeGitHub() as fake:
        for name, value in (("GITHUB_API_URL", fake.url), ("GITHUB_REPOSITORY", fake.repository),
                            ("GITMEM_GIT_TOKEN", fake.token), ("GITHUB_REF_NAME", "main")):
            monkeypatch.setenv(name, value)
        prepared = cli(["github", "prepare"], cwd=history.root)
        assert prepared.code == ExitCode.OK, prepared.err
        git(history.root, "merge", "-q", "--ff-only", written)
        opened = cli(["github", "pr", "--phase", "cycle"], cwd=history.root)
    assert opened.code == ExitCode.OK, opened.out + opened.err
    assert len(fake.pulls) == 1
    sent = fake.pulls[0]["title"] + "\n" + fake.pulls[0]["body"]
    assert SECRET not in sent and secrets.MASK in sent and "heron" in sent, sent


def test_json_output_gathers_the_environments_values_once_however_many_strings_it_holds(
        history: History, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`status` over a RULES.md of 10,000 malformed lines spent 18 of its 19 s reading the environment again for
    each of its 90,000 strings (`scrub_data` called `scrub`, which gathers `env_values`, per string). The values
    are gathered once per output now, and every string is still masked."""
    gathered: list[int] = []
    real = secrets.env_values

    def counted(environ=None):  # type: ignore[no-untyped-def]
        gathered.append(1)
        return real(environ)

    monkeypatch.setattr(secrets, "env_values", counted)
    rules = history.repo.read("RULES.md") + "".join(f"- R-{n:02d} · not a rule {n}\n" for n in range(300))
    history.repo.write("RULES.md", rules)
    shown = cli(["status", "--json"], cwd=history.root)
    assert shown.code == ExitCode.OK, shown.err
    data = json.loads(shown.out)
    assert len(data["invalid"]) >= 300
    assert SECRET not in shown.out and secrets.MASK in shown.out
    assert len(gathered) < 20, len(gathered)     # a few per command, never one per string (1,500 before)


@pytest.mark.parametrize("text,shown", [
    ("password: hunter2", "password: ***"),
    ("- db passwd=hunter2 user=app", "- db passwd=*** user=app"),
    ("pwd: Tr0ub4dor", "pwd: ***"),
    ("secret: swordfish", "secret: ***"),
    ("SMTP_PASSWORD: Tr0ub4dor, port 587", "SMTP_PASSWORD: ***, port 587"),
    ('{"password": "correct horse"}', '{"password": "***"}'),
    ("**Password**: hunter2", "**Password**: ***"),
    ("client_secret = 9f8e7d6c", "client_secret = ***"),
])
def test_a_password_assignment_is_masked_in_what_an_import_brings(text: str, shown: str) -> None:
    assert secrets.redact(text, passwords=True) == shown
    assert secrets.redact(shown, passwords=True) == shown          # masked once, the mark is no value


@pytest.mark.parametrize("text", [
    "the password policy asks for 12 characters",
    "reset your password before the demo",
    "the password: it rotates weekly, ask Dana",
    "a secret: keep the API small",
    "password: true", "secret: null", "password: ${DB_PASSWORD}", "pwd: /srv/app", "password: <your password>",
    "forgot-password flow is done",
])
def test_prose_about_passwords_and_placeholders_are_left_alone(text: str) -> None:
    assert secrets.redact(text, passwords=True) == text


def test_a_short_text_is_masked_as_the_redactors_one_by_one_mask_it() -> None:
    """A guard of the fast path (`redact_bytes` asks a short text for any needle at once): the same bytes as asking
    each redactor in turn, for texts holding each needle, alone, at an edge, and in a secret of its shape."""
    from gitmem.secrets import _REDACTORS, MASK, _masker, redact_bytes

    def one_by_one(data: bytes) -> bytes:
        for pattern in _REDACTORS:
            if pattern.present(data):
                data = pattern.regex.sub(_masker(MASK.encode(), pattern.group), data)
        return data

    samples = [b"", b"plain prose with nothing to hide", "caf\u00e9 \u2603".encode()]
    for pattern in _REDACTORS:
        for needle in pattern.needles:
            samples += [needle, b"x " + needle + b" y", needle + b"A1b2C3d4" * 12, b"key=" + needle + b"0" * 64]
    assert all(redact_bytes(sample) == one_by_one(sample) for sample in samples)
    assert redact_bytes(b"the key sk-ant-" + b"a" * 40) != b"the key sk-ant-" + b"a" * 40
