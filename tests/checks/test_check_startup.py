"""The shortcuts that keep stdlib imports off the pre-commit path give the same answers as the long way
(tests/checks/test_check_imports.py holds that the imports stay off)."""
from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pygit2
import pytest

from gitmem.config import Config, parse_config
from gitmem.gitio.blobproof import blob_id
from gitmem.memory.timestamps import Timestamp


def test_blob_id_of_one_part_is_gits_id_and_agrees_with_the_many_part_hash(tmp_path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"))
    for data in (b"", b"rules_version: 5\n", b"x" * 300_000, "é\n".encode()):
        expected = str(repo.create_blob(data))
        assert blob_id(data) == expected
        assert blob_id(memoryview(data)) == expected == blob_id(data[:1], data[1:])
        assert hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest() == expected


def test_the_default_time_zone_is_utc_without_the_zone_database_and_others_still_use_it() -> None:
    assert Config().tzinfo() is UTC
    assert parse_config(b"timezone: UTC\n").tzinfo() is UTC
    madrid = parse_config(b"timezone: Europe/Madrid\n").tzinfo()
    assert madrid == ZoneInfo("Europe/Madrid")
    moment = datetime(2026, 7, 1, 12, 0, tzinfo=Config().tzinfo())
    assert str(Timestamp.from_datetime(moment)) == "2026-07-01 12:00 UTC"


def test_regexes_compiled_on_first_use_still_do_their_jobs() -> None:
    from gitmem.config.nesting import LoneSurrogate, loads_json
    from gitmem.memory.display import printable, unlinked

    assert printable("a\x1b[31mb\u202ec") == "a\\u001b[31mb\\u202ec"
    assert unlinked("@alice fixes #12 and GH-3") == "@\u200balice fixes #\u200b12 and GH-\u200b3"
    assert loads_json('{"a": "\\u00e9"}') == {"a": "é"}
    with pytest.raises(LoneSurrogate):
        loads_json('{"a": "\\ud800"}')
