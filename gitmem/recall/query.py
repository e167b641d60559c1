"""Turning what a person or an agent typed into something FTS5 can run, whatever they typed.

FTS5 query syntax (quotes, NEAR, AND/OR/NOT, `*`, `^`, column filters) is never passed through: the
text is split into words, and each word is matched as a quoted string, OR-ed together. A stray quote,
`NEAR(`, a lone `*`, an empty query or 10 KB of pasted text therefore all mean "these words".

Simple variants of a word match too: its inflections, through the index's porter stemmer ("deploys",
"deployed"), and its compound forms (`variants`): a word memory does not hold is also looked for as two
adjacent words ("setup" finds "Set up", "login" finds "log-in"), and two adjacent query words also match
their joined form ("set up" finds "setup").
"""
from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from dataclasses import dataclass, field

from gitmem.recall.database import TOKENIZER, RecallError, get_meta

WORD_RE = re.compile(r"[^\W_]+")      # what unicode61 calls a token: letters and digits, `_` separates
MAX_TERMS = 32              # a pasted page is searched by its first 32 distinct words
# A query's bound, the same for the CLI and the agent's tool: a pasted page stays well within it.
MAX_QUERY = 20_000          # characters
# Looking for a word's compound forms tokenizes and looks up each of its cuts, a cost of the square of its
# length (a 100 KB word took 35 s); two words joined are short, so longer words are looked for as they are.
MAX_COMPOUND = 40           # characters
SAMPLE = 2000               # entry counts are exact up to this, estimated beyond (see _entries)
RARE = 3                    # words held by fewer entries than this are also looked for as compounds
# Glue, question verbs and kind names an agent types in a natural-language query ("what did the human
# decide about X", "any lesson about Y"). Memory is terse, so they are mostly absent, and an absent word
# counts against a hit: leave them out. (Use --kind to ask for a kind.)
STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be been before being below between both but by
can could did do does doing done down during each else ever few for from had has have having he her here
how i if in into is it its just me more most my no nor not now of off on once only or other our out over
own same she should so some such than that the their them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your
decide decided happen happened know knew remember remembered say said tell told think thought mention
mentioned anything something everything lesson lessons decision decisions rule rules entry entries memory
""".split())

_STEMS: dict[str, str] = {}           # word -> index term, per process: the tokenizer is fixed


@dataclass(frozen=True)
class Query:
    text: str
    words: tuple[str, ...]                                   # distinct, folded, in order
    stems: dict[str, str] = field(default_factory=dict)      # word -> the index term it becomes
    weights: dict[str, float] = field(default_factory=dict)  # word -> BM25 idf in this corpus
    df: dict[str, int] = field(default_factory=dict)         # word -> how many entries hold it (or a variant)
    match: str = ""                                          # every word found in memory, OR-ed; "" if none
    variants: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)   # word -> phrases it also is
    plain: dict[str, int] = field(default_factory=dict)      # word -> entries holding the word itself

    def expr(self, word: str) -> str:
        """The FTS5 expression for `word`: the word itself or any phrase it also is, whichever memory holds."""
        options = [quote(" ".join(phrase)) for phrase in self.variants.get(word, ())]
        if self.plain.get(word, 1) or not options:
            options.insert(0, quote(word))
        return options[0] if len(options) == 1 else "(" + " OR ".join(options) + ")"

    def rarest(self) -> list[str]:
        """Words found in memory, rarest first."""
        return sorted((word for word, count in self.df.items() if count), key=lambda word: self.df[word])

    def coverage(self, conn: sqlite3.Connection, text: str) -> float:
        """The idf-weighted share of the query's words that `text` holds (as the index sees words): 0..1."""
        return self.share(self.held(conn, text))

    def share(self, held: set[str]) -> float:
        """The idf-weighted share of the query's words that `held` names: 0..1."""
        total = sum(self.weights.values())
        return sum(self.weights[word] for word in held if word in self.weights) / total if total else 0.0

    def held(self, conn: sqlite3.Connection, text: str) -> set[str]:
        """The query's words (of those memory holds anywhere, `weights`) that `text` holds, as the index sees
        words: the word, its stem, a form with the same stem, or a compound variant."""
        folded = fold_for_search(text)
        sequence = WORD_RE.findall(folded)
        tokens = set(sequence)
        # The text's words as index terms, in order: made once per text, and only when a compound variant is
        # looked for (the ranker asks this of every sentence of every candidate, for each of up to 32 words).
        terms: list[str] | None = None
        found = set()
        for word in self.weights:
            stem = self.stems[word]
            if word in tokens or stem in tokens:
                found.add(word)
                continue
            phrases = self.variants.get(word, ())
            if phrases and terms is None:
                term_of = stems(conn, sequence)
                terms = [term_of.get(token, token) for token in sequence]
            if phrases and terms is not None and _holds_phrase(conn, phrases, terms):
                found.add(word)
                continue
            # Porter only rewrites endings, so a form of the word starts with the stem less its last letter.
            prefix = stem[:-1] if len(stem) > 3 else stem
            if prefix not in folded:
                continue
            forms = [token for token in tokens if token.startswith(prefix)]
            if forms and stem in stems(conn, forms).values():
                found.add(word)
        return found


def _holds_phrase(conn: sqlite3.Connection, phrases: tuple[tuple[str, ...], ...], terms: list[str]) -> bool:
    """Whether `terms` (a text's words as index terms, in order) hold one of `phrases` as adjacent words."""
    for phrase in phrases:
        wanted = [stems(conn, [part]).get(part, part) for part in phrase]
        if any(terms[i:i + len(wanted)] == wanted for i in range(len(terms) - len(wanted) + 1)):
            return True
    return False


class QueryRefused(RecallError):
    """A query past its bounds: the message says which and by how much."""


def bounded_query(text: str) -> str:
    """`text`, or QueryRefused when it is longer than MAX_QUERY."""
    if len(text) > MAX_QUERY:
        raise QueryRefused(f"recall: the query is {len(text)} characters; the limit is {MAX_QUERY}: search for a "
                           "few words, not a document")
    return text


def fold_for_search(text: str) -> str:
    """Lower case without diacritics, as unicode61 with remove_diacritics compares words."""
    text = text.lower()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> tuple[str, ...]:
    """Distinct folded words in order, stop words left out unless there is nothing else."""
    seen: dict[str, None] = {}
    for word in WORD_RE.findall(fold_for_search(text)):
        if word not in seen:
            seen[word] = None
            if len(seen) == MAX_TERMS * 4:
                break
    content = [word for word in seen if word not in STOPWORDS] or list(seen)
    return tuple(content[:MAX_TERMS])


def stems(conn: sqlite3.Connection, forms: set[str] | list[str] | tuple[str, ...]) -> dict[str, str]:
    """The index term of each word, from the index's own tokenizer (porter stemming) via a temp table."""
    missing = [form for form in dict.fromkeys(forms) if form not in _STEMS]
    if missing:
        if len(_STEMS) > 200_000:
            _STEMS.clear()
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_tok USING fts5(t, content='',"
                     f" tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_tok_terms"
                     " USING fts5vocab(temp, recall_tok, instance)")
        conn.execute("INSERT INTO temp.recall_tok(recall_tok) VALUES ('delete-all')")
        conn.executemany("INSERT INTO temp.recall_tok(rowid, t) VALUES (?, ?)", list(enumerate(missing)))
        # Read as bytes: the tokenizer cuts a term past 32 KiB of UTF-8 wherever that falls, inside a character
        # too, and sqlite3 cannot give such a term as text. The cut character is dropped, as the index drops it.
        for doc, term in conn.execute("SELECT doc, CAST(term AS BLOB) FROM temp.recall_tok_terms"):
            _STEMS[missing[doc]] = bytes(term).decode("utf-8", "ignore")
        for form in missing:
            _STEMS.setdefault(form, "")         # a form the tokenizer drops entirely
    return {form: _STEMS[form] for form in forms if _STEMS.get(form)}


def analyze(conn: sqlite3.Connection, text: str) -> Query:
    """Words, their index terms, their document counts and idf here, and the MATCH expression."""
    found = words(text)
    if not found:
        return Query(text, ())
    stemmed = stems(conn, found)
    total = int(get_meta(conn, "docs") or 0)
    last_id = conn.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
    plain = {word: _entries(conn, quote(word), total, last_id) for word in stemmed}
    variants = _variants(conn, text, stemmed, plain, total, last_id)
    probe = Query(text, found, stemmed, variants=variants, plain=plain)
    counts = {word: _entries(conn, probe.expr(word), total, last_id) if word in variants else count
              for word, count in plain.items()}
    weights = {word: idf(total, count) for word, count in counts.items()}
    # Words absent from memory cannot match; they still count against coverage.
    match = " OR ".join(probe.expr(word) for word in stemmed if counts[word])
    return Query(text, found, stemmed, weights, counts, match, variants, plain)


def rarity(conn: sqlite3.Connection, found: list[str]) -> dict[str, float]:
    """The idf of each of `found` (folded words) in memory, for the words memory holds: `analyze`'s weights
    without its compound forms, for a caller that weighs many words at once (recall.feedback)."""
    total = int(get_meta(conn, "docs") or 0)
    last_id = conn.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
    counts = {word: _entries(conn, quote(word), total, last_id) for word in found}
    return {word: idf(total, count) for word, count in counts.items() if count}


def _variants(conn: sqlite3.Connection, text: str, stemmed: dict[str, str], counts: dict[str, int], total: int,
              last_id: int) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Compound forms memory holds: a word memory holds in fewer than RARE entries, split in two ("setup" ->
    "set up", when memory has both halves side by side; a common word needs no help, and its splits cost the
    most to count), and two adjacent query words joined ("set up" -> "setup", a variant of the first)."""
    found: dict[str, tuple[tuple[str, ...], ...]] = {}
    for word in stemmed:
        if counts[word] >= RARE or not 5 <= len(word) <= MAX_COMPOUND or word.isdigit():
            continue
        best: tuple[int, tuple[str, ...]] = (0, ())
        for cut in range(2, len(word) - 1):
            pair = (word[:cut], word[cut:])
            if all(_holds(conn, half) for half in pair):
                best = max(best, (_entries(conn, quote(" ".join(pair)), total, last_id), pair))
        if best[0]:
            found[word] = (best[1],)
    sequence = WORD_RE.findall(fold_for_search(text))[:MAX_TERMS]
    for first, second in zip(sequence, sequence[1:], strict=False):
        owner = first if first in stemmed else second if second in stemmed else None
        joined = first + second
        if owner is None or owner in found or joined in stemmed:
            continue
        if _holds(conn, joined):
            found[owner] = ((joined,),)
    return found


def _holds(conn: sqlite3.Connection, word: str) -> bool:
    """Whether some entry holds `word` (one lookup in the index's term list)."""
    return conn.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1", (quote(word),)).fetchone() is not None


def quote(word: str) -> str:
    return f'"{word}"'           # [^\W_]+ words hold no quote to escape


def _entries(conn: sqlite3.Connection, expr: str, total: int, last_id: int) -> int:
    """How many entries match `expr` (a quoted word, say): exact up to SAMPLE, estimated beyond.

    Counting all of a common word's entries costs as much as the word is common (FTS5 walks them all,
    and so does fts5vocab); the first SAMPLE in row order and how far they reach give the density.
    """
    count: int
    reach: int | None
    count, reach = conn.execute("SELECT count(*), max(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ?"
                                " ORDER BY rowid LIMIT ?)", (expr, SAMPLE)).fetchone()
    if count < SAMPLE or not reach:
        return count
    return min(total, round(count * last_id / reach))


def idf(total: int, df: int) -> float:
    """Okapi BM25's inverse document frequency of a word `df` of `total` entries hold (as FTS5 weighs it)."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))
