"""Digits other than 0-9 read as 0-9 (rules 2), at C speed whatever the text holds."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.memory import digits
from gitmem.memory.digits import fold_digits

DIGITS = [chr(point) for point in range(0x110000) if chr(point).isdecimal()]


def _digit_by_digit(text: str) -> str:
    """The reading rules 2 gave: every `\\d` replaced by int() of it."""
    return re.sub(r"\d", lambda match: str(int(match.group())), text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(DIGITS) | st.characters(), max_size=40))
def test_every_decimal_digit_folds_as_int_reads_it(text: str) -> None:
    assert fold_digits(text) == _digit_by_digit(text)


def test_every_unicode_digit_folds_to_its_value() -> None:
    every = "".join(DIGITS)
    assert fold_digits(every) == _digit_by_digit(every) and fold_digits(every).isascii()
    assert fold_digits("cycle \u0663 \u00b7 \u06f5") == "cycle 3 \u00b7 5"


def test_a_megabyte_of_digits_converts_each_distinct_digit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a megabyte heading holding a `·` was folded digit by digit in Python: 0.7 s for each check that read it
    calls: list[str] = []
    monkeypatch.setattr(digits, "int", lambda digit: calls.append(digit) or int(digit), raising=False)
    heading = "2026-11-30 09:00 UTC \u00b7 cycle \u0663\u0664 by " * 35_000
    assert fold_digits(heading) == _digit_by_digit(heading).replace("\u0663", "3").replace("\u0664", "4")
    assert sorted(calls) == ["\u0663", "\u0664"]
    calls.clear()
    assert fold_digits("2026-11-30 09:00 UTC \u00b7 x " * 35_000) == "2026-11-30 09:00 UTC \u00b7 x " * 35_000
    assert calls == []
