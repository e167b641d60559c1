"""Decimal digits other than 0-9: read as 0-9 (rules 2), and told apart where rules 3 refuse them."""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache


@cache
def _other_digit() -> re.Pattern[str]:
    """Unicode decimal digits other than 0-9, the ones rules 2 folded (compiled on first use: the pre-commit
    path seldom meets one)."""
    return re.compile(r"[^\D0-9]")


def fold_digits(text: str) -> str:
    """`text` with every decimal digit written as 0-9 (`cycle ٣` -> `cycle 3`): how rules 2 read numbers, when
    `\\d` and int() took any decimal digit for one. Each distinct digit is converted once and the text is
    translated at C speed: converting digit by digit cost 0.7 s on a megabyte heading that held a `·`."""
    if text.isascii():
        return text
    other = set(_other_digit().findall(text))
    return text.translate({ord(digit): str(int(digit)) for digit in other}) if other else text


def parses_with_ascii_digits(text: str, parse: Callable[[str], object | None]) -> bool:
    """Text that fails to parse only because it writes digits other than 0-9 (`cycle ٣`): a rules-3 problem (the
    code's `digits` variant), so that history written before it, when such text parsed, still verifies."""
    folded = fold_digits(text)
    return folded != text and parse(folded) is not None
