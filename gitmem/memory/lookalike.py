"""How a reader sees a line of memory: what renders alike read as one. GitHub's page and the next cycle's model
read `- Аnswer: yes` (a Cyrillic А), `- **Answer**: yes`, `-\u00a0Answer: yes`, `  - Answer: yes` or `- Answer :
yes` as the field `- Answer: yes`, where the parser (gitmem.memory.fields.parse_fields) reads one exact spelling
and takes the rest for free text. A rule about a field asks here whether a line reads as that field, so text
that only looks like one is judged as what it looks like. Pure: no files, no git.
"""
from __future__ import annotations

import re
import unicodedata
from functools import cache

# Letters of other scripts drawn as Latin ones (the common confusables of Unicode's list: Cyrillic, Greek,
# Armenian, Latin's own IPA and small capitals). NFKC folds the rest that only look styled (fullwidth, math bold).
_LATIN_LOOKALIKES = str.maketrans({
    **dict.fromkeys("АаΑαɑ", "a"), **dict.fromkeys("ВвΒβʙ", "b"), **dict.fromkeys("СсϹϲᴄ", "c"),
    **dict.fromkeys("ԁԀ", "d"), **dict.fromkeys("ЕеЁёΕεҽᴇ", "e"), **dict.fromkeys("ԍɡ", "g"),
    **dict.fromkeys("НнΗһʜ", "h"), **dict.fromkeys("ІіΙιӀӏıɪ", "i"), **dict.fromkeys("Јјϳ", "j"),
    **dict.fromkeys("КкΚκᴋ", "k"), **dict.fromkeys("ⅼʟ", "l"), **dict.fromkeys("МмΜᴍ", "m"),
    **dict.fromkeys("ΝոռɴПп", "n"), **dict.fromkeys("ОоΟοօσᴏ", "o"), **dict.fromkeys("РрΡρᴘ", "p"),
    **dict.fromkeys("ԛԚ", "q"), **dict.fromkeys("гᴦʀ", "r"), **dict.fromkeys("ЅѕꜱƽՏ", "s"),
    **dict.fromkeys("ТтΤτᴛ", "t"), **dict.fromkeys("սυᴜ", "u"), **dict.fromkeys("νѵᴠ", "v"),
    **dict.fromkeys("ԜԝѡωᴡɯШш", "w"), **dict.fromkeys("ХхΧχ", "x"), **dict.fromkeys("УуΥγʏ", "y"),
    **dict.fromkeys("ΖᴢƵ", "z"),
})
# Marks a renderer shows as no character or as structure around the text: list markers and quotes at the start,
# emphasis, code spans and strike-through anywhere, and backslash escapes.
_MARKUP_START = re.compile(r"^(?:\s*(?:[-*+>]|\d{1,9}[.)])(?=\s|$))*\s*")
_MARKUP = re.compile(r"[*_~`\\]+")


@cache
def _field_re(key: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(read_as(key))}\s*:")


def read_as(line: str) -> str:
    """`line` as a reader takes it, for comparing: compatibility forms folded (NFKC: NBSP is a space, fullwidth and
    math letters plain), what has no width dropped (format characters: zero-width spaces and joiners, BOMs, bidi
    marks), letters of other scripts drawn as Latin ones made Latin, the markdown around the text dropped, and
    case folded."""
    text = "".join(ch for ch in unicodedata.normalize("NFKC", line) if unicodedata.category(ch) != "Cf")
    text = _MARKUP.sub("", _MARKUP_START.sub("", text.translate(_LATIN_LOOKALIKES)))
    return " ".join(text.split()).casefold()


def reads_as_field(line: str, key: str) -> bool:
    """Whether a reader takes `line` for a `- key: value` field line, in any spelling that renders like it."""
    return _field_re(key).match(read_as(line)) is not None


_RULE_RE = re.compile(r"r ?- ?[0-9]")


def reads_as_rule(line: str) -> bool:
    """Whether a reader takes `line` for a line of RULES' rule sections: an `R-NN` first (`- R-09 · …`, in any
    spelling that renders like it)."""
    return _RULE_RE.match(read_as(line)) is not None
