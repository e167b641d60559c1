"""What an interactive session writes through gitmem's commands and tools holds no secret value of the environment.

An agent CLI the human runs has the human's environment: one that put `$HERON_DEPLOY_PASSWORD`'s value into a
`gitmem log add` wrote it into memory, and the human's next commit put it in history. Every memory write masks
the environment's secret values (gitmem.memory_writer); the runner's own masking of what a cycle commits is
tested with the cycle."""
from __future__ import annotations

import pytest

from gitmem import secrets
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo
from tests.support.mcp_client import call, converse

SECRET = "qZ4vN8tLw2Xc7RbK5mJd"          # no known token shape: only the environment says it is a secret
NAME = "HERON_DEPLOY_PASSWORD"

WRITES = [
    (["log", "add", "--task", f"log in with {SECRET}", "--outcome", "built", "--result", f"used {SECRET}",
      "--evidence", f"curl -u heron:{SECRET} /health"], "LOG.md"),
    (["now", "add", "--did", f"rotated to {SECRET}", "--human", "nothing", "--next", "watch the logins"], "NOW.md"),
    (["decision", "ask", "--title", f"keep {SECRET}?", "--recommendation", f"rotate {SECRET} weekly"],
     "DECISIONS.md"),
    (["lesson", "add", "--title", "a password in a command line", "--happened", f"typed {SECRET} in a shell",
      "--why", "no vault yet", "--change", "use the vault"], "LESSONS.md"),
]


@pytest.mark.parametrize(("argv", "path"), WRITES, ids=[argv[0] for argv, _ in WRITES])
def test_a_write_command_masks_the_environments_secret_values(memrepo: GitRepo, cli, argv: list[str], path: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, SECRET)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    text = memrepo.read(path)
    assert SECRET not in text and secrets.MASK in text, text[-600:]


def test_a_value_of_a_variable_that_is_no_secret_is_written_as_given(memrepo: GitRepo, cli,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERON_REGION", "eu-west-3-heron")
    result = cli(["now", "add", "--did", "moved to eu-west-3-heron", "--human", "nothing", "--next", "x"],
                 cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert "eu-west-3-heron" in memrepo.read("NOW.md")


def test_the_mcp_tools_mask_it_too(memrepo: GitRepo) -> None:
    seen = converse([call("log_entry", {"task": f"deploy with {SECRET}", "outcome": "built",
                                        "result": f"the login {SECRET} works"})],
                    cwd=memrepo.path, env={NAME: SECRET})
    assert seen.answers and not seen.answers[0].is_error, seen.answers
    text = memrepo.read("LOG.md")
    assert SECRET not in text and "deploy with ***" in text


# A value that is no UTF-8 (Latin-1 bytes in a password): os.environ holds its undecodable bytes as lone surrogates.
RAW = b"r\xe4w-p\xe4ss-\xff\xfe-word"
RAW_TEXT = RAW.decode("utf-8", "surrogateescape")


def test_a_value_that_is_no_utf8_is_masked_and_breaks_no_command(memrepo: GitRepo, cli,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """It crashed every command that masks (a UnicodeEncodeError traceback, exit 70); the refusal of an argument
    holding it showed it as `r\\xe4w-p\\xe4ss-…`; and its bytes as a tool writes them (in a file) were not masked."""
    monkeypatch.setenv(NAME, RAW_TEXT)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    result = cli(["log", "add", "--task", "log in", "--outcome", "built", "--result", "r"], cwd=memrepo.path)
    assert result.code == ExitCode.OK and "Traceback" not in result.err, result.err
    status = cli(["status"], cwd=memrepo.path)
    assert status.code == ExitCode.OK and "Traceback" not in status.err, status.err
    refused = cli(["log", "add", "--task", f"log in with {RAW_TEXT}", "--outcome", "built", "--result", "r"],
                  cwd=memrepo.path)
    assert refused.code == ExitCode.USAGE and "not UTF-8 text" in refused.err, refused.err
    assert "p\\xe4ss" not in refused.err and "log in with ***" in refused.err, refused.err
    assert secrets.redact_bytes(b"pw=" + RAW + b"\n", secrets.env_values()) == b"pw=***\n"


def test_the_mcp_servers_error_answers_mask_it(memrepo: GitRepo) -> None:
    """Every error the server answers with is masked, as every result is: a refused read quoted the uri it was
    given, and a bug's answer quotes its exception's message."""
    from tests.support.mcp_client import read_refused

    seen = converse([read_refused(f"gitmem://{SECRET}")], cwd=memrepo.path, env={NAME: SECRET})
    assert seen.answers and SECRET not in str(seen.answers[0]) and secrets.MASK in str(seen.answers[0]), seen.answers


@pytest.mark.parametrize("held", [SECRET + "\n", SECRET + "\r\n", f"  {SECRET}\t", f'"{SECRET}"', f"'{SECRET}'\n"])
def test_a_value_held_with_a_line_end_spaces_or_quotes_is_masked_without_them(memrepo: GitRepo, cli, held: str,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret pasted into a CI settings page or a .env file often keeps its line end or its quotes; a tool
    writes the value without them (`curl -u heron:VALUE`), and that was written as given."""
    monkeypatch.setenv(NAME, held)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    result = cli(["log", "add", "--task", f"curl -u heron:{SECRET} /health", "--outcome", "built", "--result", "r"],
                 cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    text = memrepo.read("LOG.md")
    assert SECRET not in text and "curl -u heron:*** /health" in text, text[-400:]


@pytest.mark.parametrize("written", ["key: |\n  {first}\n  {second}\n", "{first}\r\n{second}", "> {first}\n> {second}"])
def test_each_line_of_a_value_of_many_lines_is_masked(memrepo: GitRepo, cli, written: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A value of several lines (a service account's key, a certificate bundle) is rewritten line by line by the
    tools that carry it: indented in a YAML block, with CRLF line ends, quoted in Markdown. Neither the whole nor
    any line was masked then."""
    first, second = "Zm9vYmFyYmF6cXV4" + SECRET[:6], SECRET[6:] + "cXV1eGNvcmdl"
    monkeypatch.setenv(NAME, f"{first}\n{second}\n")
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r",
                  "--evidence", written.format(first=first, second=second)], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    text = memrepo.read("LOG.md")
    assert first not in text and second not in text and text.count(secrets.MASK) >= 2, text[-400:]


def test_a_value_as_html_or_xml_escapes_it_is_masked(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page or an XML config a tool writes escapes `&`, `<`, `>` and quotes: `p&amp;ss&lt;w&gt;rd`. That form
    was written as given."""
    import html

    value = "p&ss<w>rd\"x'1-" + SECRET[:6]
    monkeypatch.setenv(NAME, value)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    escaped = [html.escape(value), html.escape(value, quote=False)]
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r",
                  "--evidence", " and ".join(f"<pass>{form}</pass>" for form in escaped)], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    text = memrepo.read("LOG.md")
    assert not any(form in text for form in escaped) and "<pass>***</pass> and <pass>***</pass>" in text, text[-300:]


def test_masking_a_value_held_with_a_line_end_keeps_the_line_end_after_it() -> None:
    """The value was masked with the line end it was held with, which joined the next line to the mark."""
    values = secrets.env_values({NAME: SECRET + "\n"})
    assert secrets.redact_bytes(f"pw: {SECRET}\nk: |\n".encode(), values) == b"pw: ***\nk: |\n"
