"""How a reader sees a line of memory: what renders alike read as one. GitHub's page and the next cycle's model
read `- Аnswer: yes` (a Cyrillic А), `- **Answer**: yes`, `  - Answer: yes`, `#### Answer: yes`, `- <b>Answer</b>:
yes`, `- Answer&#58; yes`, `- Answer∶ yes` (a ratio sign) or `- [Answer](#): yes` as the field `- Answer: yes`,
where the parser (gitmem.memory.fields.parse_fields) reads one exact spelling and takes the rest for free text.
A rule about a field asks here whether a line reads as that field, so text that only looks like one is judged as
what it looks like; a line counts where it starts as rendered (a list item, a heading, a paragraph, an HTML block),
never as the indented text that continues another field. Pure: no files, no git.
"""
from __future__ import annotations

import html
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
# Colons and dashes of other scripts and of mathematics, drawn as `:` and `-` (Unicode's confusables for them, and
# the dash punctuation, category Pd); the dots drawn as the `·` of a rule line. NFKC folds the fullwidth and small
# forms.
_PUNCTUATION_LOOKALIKES = str.maketrans({
    **dict.fromkeys("\u02d0\u02f8\u0589\u05c3\u0703\u0704\u0903\u0a83\u16ec\u1803\u1809\u205a\u2236\ua789"
                    "\ufe30", ":"),
    **dict.fromkeys("\u02d7\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2796"
                    "\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u301c\u30a0\ufe31\ufe32", "-"),
    **dict.fromkeys("\u1427\u2022\u2219\u22c5\u2027\u30fb\ua78f", "\u00b7"),
})
# What a renderer shows as markup around the text, not as text. HTML tags and comments anywhere (`<b>Answer</b>`,
# `<summary>`); a link shows its text (`[Answer](#)`, `[Answer][1]`).
_HTML_TAG = re.compile(r"<!--.*?(?:-->|$)|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
# Structure at the start: list markers, quotes and heading marks (`- ### Answer:` is a heading in a list item).
_MARKUP_START = re.compile(r"^(?:\s*(?:>|(?:[-*+]|\d{1,9}[.)]|#{1,6})(?=\s|$)))*\s*")
# Emphasis, code spans and strike-through anywhere, and backslash escapes.
_MARKUP = re.compile(r"[*_~`\\]+")
# A line opens a block of its own even right under text: a list item, a quote, a heading, an HTML block.
_BLOCK_START = re.compile(r"\s*(?:[-*+>]|\d{1,9}[.)]|#{1,6}(?=\s|$)|<)")


@cache
def _field_re(key: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(read_as(key))}\s*:")


def read_as(line: str) -> str:
    """`line` as a reader takes it, for comparing: the HTML tags dropped and its entities resolved (`&#58;` is a
    colon), a link shown as its text, compatibility forms folded (NFKC: NBSP is a space, fullwidth and math letters
    plain), what has no width dropped (format characters: zero-width spaces and joiners, BOMs, bidi marks), letters
    of other scripts drawn as Latin ones made Latin, colons, dashes and dots drawn alike made one, the markdown
    around the text dropped (list markers, quotes, heading marks, emphasis), and case folded."""
    text = _LINK.sub(r"\1", html.unescape(_HTML_TAG.sub("", line)))
    text = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    text = text.translate(_LATIN_LOOKALIKES).translate(_PUNCTUATION_LOOKALIKES)
    text = _MARKUP.sub("", _MARKUP_START.sub("", text))
    return " ".join(text.split()).casefold()


def continues_paragraph(line: str, *, previous: str) -> bool:
    """Whether `line`, under `previous`, is more of the paragraph above rather than a start of its own: an indented
    line right under text that opens no block (GitHub joins it to the item above, and the model reads it as more of
    that field, as the parser does). A line at the margin is taken as its own start: the model reads raw text."""
    return (line[:1] in (" ", "\t") and bool(previous.strip()) and _BLOCK_START.match(line) is None
            and not previous.lstrip().startswith("#"))


def reads_as_field(line: str, key: str, *, previous: str = "") -> bool:
    """Whether a reader takes `line` (under `previous`, the line above it) for a `- key: value` field line, in any
    spelling that renders like it: the field's name first where the line starts as rendered."""
    return not continues_paragraph(line, previous=previous) and _field_re(key).match(read_as(line)) is not None


# `R-09 · …` or `R-09 - …` first: an id then its separator, not any `r-2` in prose.
_RULE_RE = re.compile(r"r ?- ?[0-9]+ ?[·-]")


def reads_as_rule(line: str, *, previous: str = "") -> bool:
    """Whether a reader takes `line` (under `previous`, the line above it) for a line of RULES' rule sections: an
    `R-NN ·` first where the line starts as rendered (`- R-09 · …`, `### R‐09 · …`, in any spelling that renders like
    it)."""
    return not continues_paragraph(line, previous=previous) and _RULE_RE.match(read_as(line)) is not None
