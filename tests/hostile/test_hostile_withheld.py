"""Hostile agents, class 4b: secrets by value. Whatever a withheld variable is called, its value (and its URL-encoded
and base64 forms) is masked in every file the runner commits, in LOG and NOW however they were written, in the
agent's last words and in what the runner prints; ordinary values (a path, a number, a boolean, a short word) are
not masked anywhere. The agent reaches the values the way a real one would: from its parent's /proc environ."""
from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from gitmem import secrets
from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent, no_traceback

# Withheld from the agent by their names, values of no known token format.
WITHHELD = {"DEPLOY_DB_PASSWORD": "s3cr3t-db-Pa55", "MY_THING_SECRET": "opaque value 42 here",
            "X_AUTH": "x-v4lue:with/slashes+plus", "DEPLOY_PASS": "hunter2-deploy", "MYSQL_PWD": "mysql-pw-9x"}
# Given to the agent (their names are not credentials): its own, never masked; and withheld, but not secret-shaped.
ORDINARY = {"X": "plainvalue-given", "MY_THING": "another-given-one", "TOOLS_PATH_SECRET": "/usr/bin",
            "PORT_SECRET": "8080", "RATE_SECRET": "12.5e3", "FLAG_SECRET": "true", "SHORT_SECRET": "abcde"}


def _forms(value: str) -> list[str]:
    return [value, quote(value, safe=""), base64.b64encode(value.encode()).decode()]


def _agent_body(values: list[str], *, log_via_cli: bool = True) -> str:
    """Writes each value in every form to a new file, to LOG through `gitmem log add`, to a NOW block through
    `gitmem now add`, and to its stderr."""
    forms = [form for value in values for form in _forms(value)]
    text = " | ".join(forms)
    body = (f"open(os.path.join(root, 'leak.txt'), 'w').write({text!r} + '\\n')\n"
            f"sys.stderr.write({text!r} + '\\n')\n")
    if log_via_cli:
        body += (f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 'leak ' + {forms[0]!r}, '--outcome', "
                 f"'built', '--result', {text!r}], check=True, cwd=root)\n"
                 f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', {text!r}, '--human', 'nothing', "
                 f"'--next', 'n'], check=True, cwd=root)\n")
    return body


def _committed(repo: GitRepo) -> str:
    return "\n".join(file_at(repo.repo, "HEAD", name) or "" for name in ("leak.txt", "LOG.md", "NOW.md"))


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {**WITHHELD, **ORDINARY}.items():
        monkeypatch.setenv(name, value)


def test_withheld_values_of_any_name_are_masked_in_files_log_now_and_output(tmp_path: Path, memrepo: GitRepo, cli,
                                                                            environment: None) -> None:
    command_agent(tmp_path, memrepo, _agent_body([*WITHHELD.values(), *ORDINARY.values()]), write_memory=False)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    committed, printed = _committed(memrepo), result.out + result.err
    for value in WITHHELD.values():
        for form in _forms(value):
            assert form not in committed and form not in printed, form
    for value in ORDINARY.values():          # the agent's own, and values that are no secrets: kept as written
        assert value in committed, value
    assert "removed a secret value from leak.txt" in committed and is_clean(memrepo)
    assert no_traceback(result.err)


def test_the_agents_last_words_are_masked_when_it_fails(tmp_path: Path, memrepo: GitRepo, cli,
                                                        environment: None) -> None:
    value = WITHHELD["DEPLOY_DB_PASSWORD"]
    command_agent(tmp_path, memrepo, _agent_body([value], log_via_cli=False) + "sys.exit(3)\n",
                  write_memory=False)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED and no_traceback(result.err)
    assert value not in result.out + result.err and value not in memrepo.read("LOG.md")
    assert "exited with code 3" in memrepo.read("LOG.md")


def test_a_value_holding_a_withheld_value_is_withheld_and_masked_whole() -> None:
    environ = {"DEPLOY_DB_PASSWORD": "s3cr3t-db-Pa55", "DATABASE_URL": "postgres://app:s3cr3t-db-Pa55@db/prod",
               "HOME": "/root", "X": "plainvalue-given"}
    given = secrets.agent_environment(environ)
    assert given == {"HOME": "/root", "X": "plainvalue-given"}
    masked = secrets.redact_bytes(b"url postgres://app:s3cr3t-db-Pa55@db/prod x plainvalue-given",
                                  secrets.env_values(environ))
    assert masked == b"url *** x plainvalue-given"


@pytest.mark.parametrize("name,secret", [
    ("DEPLOY_PASS", True), ("DB_PASS", True), ("SMTP_PASS_WORD", True), ("MYSQL_PWD", True), ("DB_PWD", True),
    ("API_CREDS", True), ("pass", True), ("LDAP_BIND_PW", True), ("DB_PW", True), ("smtp_pw", True),
    ("PWD", False), ("OLDPWD", False), ("BYPASS", False), ("PASSENGER_COUNT", False), ("COMPASS_HOME", False),
    ("PATH", False), ("AUTHOR", False), ("PW_TEST_HTML_REPORT_OPEN", False), ("PW_TEST_REPORTER", False),
    ("PWDEBUG", False),
    ("DBPASS", True), ("MYSQLPWD", True), ("SMTPPASS", True), ("APITOKEN", True), ("DEPLOY_DBPASS", True),
    ("PASSAGE", False), ("BYPASS_CACHE", False), ("MULTIPASS_DRIVER", False), ("TRESPASS_LOG", False),
])
def test_a_password_named_the_usual_short_ways_is_withheld(name: str, secret: bool) -> None:
    """`…_PASS`, `…_PWD` (MySQL's own `MYSQL_PWD`), `…_CREDS` and, as the last word, `…_PW` (OpenLDAP's and many
    deploy scripts' `LDAP_BIND_PW`, `DB_PW`) name credentials as surely as `…_PASSWORD`; the shell's working
    directory (`PWD`, `OLDPWD`), Playwright's `PW_TEST_…` settings and words that only hold the letters do not.
    `PASS` and `PWD` glued to the end of a word (`DBPASS`, `MYSQLPWD`) name one too; English words that end in
    PASS (`BYPASS`, `COMPASS`) and words that start with it (`PASSAGE`) do not."""
    assert secrets.is_secret_name(name) is secret


@pytest.mark.parametrize("value,shaped", [
    ("/usr/bin", False), ("/usr/bin:/bin", False), ("~", False), ("8080", False), ("-12.5e3", False),
    ("1234567890", False), ("true", False), ("OFF", False), ("abcde", False), ("        ", False),
    ("/not/a/real/path/at/all", True), ("/AbC+dEf/GhIj==", True), ("s3cr3t-db-Pa55", True),
    ("opaque value 42 here", True), ("١٢٣٤٥٦٧٨٩", True),     # Arabic-Indic digits are no number here
])
def test_what_counts_as_secret_shaped(value: str, shaped: bool) -> None:
    assert secrets.secret_shaped(value) is shaped


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the runner's environ from /proc")
def test_an_agent_reading_its_parents_environ_gets_nothing_committed(tmp_path: Path, memrepo: GitRepo) -> None:
    """The hostile run: the runner withholds DEPLOY_DB_PASSWORD; the agent reads /proc/$PPID/environ and writes
    everything it finds, raw and encoded."""
    body = ("import base64, urllib.parse\n"
            "found = open(f'/proc/{os.getppid()}/environ', 'rb').read().decode().split('\\0')\n"
            "lines = [line + ' ' + urllib.parse.quote(line, safe='') + ' ' + base64.b64encode(line.encode()).decode()"
            " for line in found]\n"
            "open(os.path.join(root, 'environ.txt'), 'w').write('\\n'.join(lines) + '\\n')\n")
    command_agent(tmp_path, memrepo, body)
    env = {**os.environ, **WITHHELD, **ORDINARY}
    done = subprocess.run([sys.executable, "-m", "gitmem", "cycle"], cwd=memrepo.path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    committed = file_at(memrepo.repo, "HEAD", "environ.txt") or ""
    assert "DEPLOY_DB_PASSWORD=***" in committed
    for value in WITHHELD.values():
        for form in _forms(value):
            assert form not in committed + done.stdout + done.stderr, form
    assert "X=plainvalue-given" in committed and "PORT_SECRET=8080" in committed


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the runner's environ from /proc")
def test_encoded_forms_tools_write_are_masked_in_files_names_log_and_output(tmp_path: Path, memrepo: GitRepo) -> None:
    """The forms a tool writes without trying to hide anything: `base64` of the whole environ (folded at 76
    columns, so a value may sit across a line break), hex either case, lower-case URL escapes, a value cut by a
    line break; in a file, in a file's name, in the task (the commit message) and on stderr."""
    value = WITHHELD["DEPLOY_DB_PASSWORD"]
    value, slashed = WITHHELD["DEPLOY_DB_PASSWORD"], WITHHELD["X_AUTH"]
    body = ("import base64, re, urllib.parse\n"
            "raw = open(f'/proc/{os.getppid()}/environ', 'rb').read().decode().split('\\0')\n"
            "found = dict(line.split('=', 1) for line in raw if '=' in line)\n"
            "secret, slashed = found['DEPLOY_DB_PASSWORD'], found['X_AUTH']\n"
            "lower = re.sub('%[0-9A-F]{2}', lambda m: m.group(0).lower(), urllib.parse.quote(slashed, safe=''))\n"
            "for pad in range(3):\n"
            "    folded = base64.encodebytes(b'x' * (70 + pad) + secret.encode() + b'y' * 70).decode()\n"
            "    open(os.path.join(root, f'environ{pad}.b64'), 'w').write(folded)\n"
            "open(os.path.join(root, 'forms.txt'), 'w').write('\\n'.join([secret.encode().hex(), "
            "secret.encode().hex().upper(), lower, "
            "secret[:6] + '\\n' + secret[6:], urllib.parse.quote_plus('a b ' + secret)]) + '\\n')\n"
            "open(os.path.join(root, 'named-' + secret + '.txt'), 'w').write('x\\n')\n"
            "sys.stderr.write(secret.encode().hex() + '\\n')\n"
            f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 'leak ' + secret.encode().hex(), "
            "'--outcome', 'built', '--result', 'r', '--evidence', lower], "
            "check=True, cwd=root)\n"
            f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', '--next', 'n'], "
            "check=True, cwd=root)\n")
    command_agent(tmp_path, memrepo, body, write_memory=False)
    env = {**os.environ, **WITHHELD, **ORDINARY}
    done = subprocess.run([sys.executable, "-m", "gitmem", "cycle"], cwd=memrepo.path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    assert no_traceback(done.stderr)
    names = git_names(memrepo)
    assert not any(value in name for name in names), names
    committed = "\n".join(file_at(memrepo.repo, "HEAD", name) or "" for name in names)
    message = memrepo.repo.head.peel().message
    blob = committed + message + done.stdout + done.stderr
    assert committed.count("***") >= 8
    folded = [base64.encodebytes(b"x" * (70 + pad) + value.encode() + b"y" * 70) for pad in range(3)]
    lower = re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(slashed, safe=""))
    for form in [value, slashed, value.encode().hex(), value.encode().hex().upper(), lower, value[6:],
                 *(f.decode().replace("\n", "")[100:140] for f in folded)]:
        assert form not in blob.replace("\n", ""), form


def git_names(repo: GitRepo) -> list[str]:
    return subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=repo.path, capture_output=True,
                          text=True, check=True).stdout.splitlines()


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the runner's environ from /proc")
def test_a_value_as_json_writes_it_is_masked(tmp_path: Path, memrepo: GitRepo) -> None:
    """A tool that dumps its environment as JSON escapes a quote, a backslash, a tab and (by default) every letter
    that is no ASCII: `"p\\u00e4ss\\"w\\\\rd"`. Those forms were committed as written, in a file and in LOG."""
    values = {"DEPLOY_PASSWORD": 'p\u00e4ss"w\\rd-\u00fcn\u00ef', "X_TOKEN": "line one\tline two"}
    body = ("import json\n"
            "raw = open(f'/proc/{os.getppid()}/environ', 'rb').read().decode().split('\\0')\n"
            "found = dict(line.split('=', 1) for line in raw if '=' in line)\n"
            "open(os.path.join(root, 'env.json'), 'w').write(json.dumps(found) + '\\n')\n"
            "open(os.path.join(root, 'env8.json'), 'w', encoding='utf-8')"
            ".write(json.dumps(found, ensure_ascii=False) + '\\n')\n"
            f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', 't', '--outcome', 'built', '--result', 'r', "
            "'--evidence', json.dumps(found['DEPLOY_PASSWORD'])], check=True, cwd=root)\n"
            f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', '--next', 'n'], "
            "check=True, cwd=root)\n")
    command_agent(tmp_path, memrepo, body, write_memory=False)
    done = subprocess.run([sys.executable, "-m", "gitmem", "cycle"], cwd=memrepo.path, env={**os.environ, **values},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.OK and no_traceback(done.stderr), done.stderr
    committed = "\n".join(file_at(memrepo.repo, "HEAD", name) or "" for name in ("env.json", "env8.json", "LOG.md"))
    import json
    for value in values.values():
        for form in (json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
            assert form not in committed, form
    assert committed.count("***") >= 5
