"""Forms a secret value of several words takes when ordinary tools write it: text wrapped at its spaces, and the
shell's backslash quoting (`printf %q`, `ls -b`). Each was committed and written as given."""
from __future__ import annotations

import io
import shutil
import subprocess

import pytest

from gitmem import secrets
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

NAME = "DEPLOY_PASS"
PASSPHRASE = "correct horse battery staple"          # a passphrase: words, no token shape

FOLDS = {
    "hard-wrapped": "used correct horse\nbattery staple to log in",
    "list-continuation": "used correct\n  horse battery\n  staple to log in",
    "quoted": "used correct horse\n> battery staple to log in",
    "crlf-and-tab": "used correct horse\r\n\tbattery  staple to log in",
}


def _logged(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, value: str, evidence: str) -> str:
    """LOG as `gitmem log add` leaves it, with `value` a secret of the environment and `evidence` written."""
    monkeypatch.setenv(NAME, value)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r", "--evidence", evidence],
                 cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    return memrepo.read("LOG.md")


@pytest.mark.parametrize("written", list(FOLDS.values()), ids=list(FOLDS))
def test_a_value_of_several_words_wrapped_at_its_spaces_is_masked(memrepo: GitRepo, cli, written: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A Markdown paragraph hard-wrapped at 80 or 120 columns (an editor, `fmt`, Prettier's proseWrap), a list
    item's continuation line or a quote breaks a passphrase at one of its spaces: its words were written as
    given, one part on each line."""
    text = _logged(memrepo, cli, monkeypatch, PASSPHRASE, written)
    assert "horse" not in text and "battery" not in text and "used *** to log in" in text, text[-300:]


def test_the_runner_masks_a_wrapped_value_in_a_file_of_any_size_however_it_is_read(monkeypatch) -> None:
    """The runner streams the files it commits: a wrapped value must be masked whichever read it falls across."""
    values = secrets.env_values({NAME: PASSPHRASE})
    data = ("x" * 50 + " correct horse\n   battery staple\n" + "y" * 50 + "\n") * 3
    whole = secrets.redact_bytes(data.encode(), values)
    assert b"battery" not in whole and whole.count(b"***") == 3, whole
    for chunk in (7, 13, 32):
        monkeypatch.setattr(secrets, "CHUNK", chunk)
        monkeypatch.setattr(secrets, "KEEP", 4 * chunk + 80)
        sink = io.BytesIO()
        assert secrets.redact_stream(io.BytesIO(data.encode()), sink, values)
        assert sink.getvalue() == whole, (chunk, sink.getvalue())


def test_words_of_a_value_apart_from_each_other_are_kept() -> None:
    """Only the value's words in order, with nothing but blanks between them, are the value."""
    values = secrets.env_values({NAME: PASSPHRASE})
    text = b"a correct horse, then battery staple\n\ncorrect horse\n\nbattery staple\n"
    assert secrets.redact_bytes(text, values) == text


SHELL_VALUE = "p@ss w0rd!(x)$y,z"


@pytest.mark.skipif(shutil.which("bash") is None, reason="compares with bash's own printf %q")
def test_a_value_as_the_shell_quotes_it_with_backslashes_is_masked(memrepo: GitRepo, cli,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`printf '%q ' "$@"` (how scripts log the command they run) and `ls -b` put a backslash before each space
    and shell character: `p@ss\\ w0rd\\!\\(x\\)\\$y\\,z`. That form was written as given."""
    quoted = subprocess.run(["bash", "-c", 'printf %q "$1"', "bash", SHELL_VALUE], capture_output=True, text=True,
                            check=True).stdout
    assert quoted != SHELL_VALUE and "\\ " in quoted
    text = _logged(memrepo, cli, monkeypatch, SHELL_VALUE, f"ran: deploy --password {quoted} --now")
    assert quoted not in text and "w0rd" not in text and "deploy --password *** --now" in text, text[-300:]


def test_a_value_as_pythons_bytes_repr_shows_it_is_masked(memrepo: GitRepo, cli,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A letter that is no ASCII is shown as its UTF-8 bytes' `\\xNN` escapes wherever Python prints bytes
    (`os.environb`, a bytes value in a log or a traceback): `b'p\\xc3\\xa4ss-w\\xc3\\xb6rd-1234'`. That form was
    written as given (only a value that is no UTF-8 was masked as escapes)."""
    value = "p\u00e4ss-w\u00f6rd-1234"
    shown = repr(value.encode())[2:-1]
    assert "\\xc3\\xa4" in shown
    text = _logged(memrepo, cli, monkeypatch, value, f"environb: {{b'{NAME}': b'{shown}'}}")
    assert shown not in text and f"b'{NAME}': b'***'" in text, text[-300:]


def test_a_value_in_base32_is_masked_wherever_it_starts(memrepo: GitRepo, cli,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`base32` (and TOTP tooling, in either case) writes a value in 5-byte groups: each of its five alignments in
    a longer text was written as given."""
    import base64

    value = "p\u00e4ss-w\u00f6rd-1234"
    written = [base64.b32encode((lead + value).encode()).decode() for lead in ("", "a", "ab", "abc", "abcd")]
    written.append(base64.b32encode(value.encode()).decode().lower())
    text = _logged(memrepo, cli, monkeypatch, value, "encoded: " + " , ".join(written))
    core = base64.b32encode(value.encode()[:10]).decode()        # two whole groups of the value alone
    assert core not in text and core.lower() not in text and text.count("***") >= 6, text[-400:]


def test_a_value_in_unicodes_decomposed_form_is_masked(memrepo: GitRepo, cli,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS file names and some editors write `ä` as `a` and a combining mark (NFD): the same value, other bytes.
    It was written as given; so was a value set decomposed and written composed."""
    import unicodedata

    value = "p\u00e4ss-w\u00f6rd-1234"
    decomposed = unicodedata.normalize("NFD", value)
    assert decomposed != value
    text = _logged(memrepo, cli, monkeypatch, value, f"typed: {decomposed} end")
    assert decomposed not in text and "typed: *** end" in text, text[-300:]
    assert secrets.redact(f"x {value} y", secrets.env_values({NAME: decomposed})) == "x *** y"
