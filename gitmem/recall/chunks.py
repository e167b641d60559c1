"""What the embedder sees of an entry: its content words, in overlapping windows.

A static model averages token vectors, so one fact in a long entry is drowned by everything around it.
Entries are therefore cut into windows of WINDOW content words that overlap by half: any run of up to
STRIDE words lies whole inside one window, and a fact deep in a 40-line close report gets a vector of its
own. Stop words (the recall query's list) are left out of windows and queries alike: they carry no meaning
here and only pull every vector towards the same point. The title leads every window, as context.

Eight words, not more: a bare fact against its question scores far above the best unrelated text, and each
filler word averaged in with it narrows that margin (24-word windows made the two overlap; measured in
benchmarks/bench_recall_semantic.py). The window is part of the vector store's key (`vectors.store_key`), so a
different size rebuilds the vectors.
"""
from __future__ import annotations

from gitmem.recall.query import STOPWORDS, WORD_RE, fold_for_search

WINDOW = 8
STRIDE = 4


def content_words(text: str) -> list[str]:
    """The words of `text` as written (case kept: the tokenizer uses it), stop words left out."""
    return [word for word in WORD_RE.findall(text) if fold_for_search(word) not in STOPWORDS]


def shape() -> str:
    """The windowing as it is now, for the vector store's key."""
    return f"window {WINDOW}/{STRIDE}"


def _starts(count: int) -> list[int]:
    last = max(0, count - WINDOW)
    return list(range(0, last, STRIDE)) + [last]


def windows(title: str, body: str) -> list[str]:
    """The texts to embed for one entry: at least one, even for an empty entry."""
    return window_texts(title, window_spans(body))


def window_spans(body: str) -> list[tuple[str, int, int]]:
    """The body's windows, each with the character span of the body it covers (for snippets); none when the
    body has no content word."""
    found = [m for m in WORD_RE.finditer(body) if fold_for_search(m.group()) not in STOPWORDS]
    return [(" ".join(m.group() for m in found[start:start + WINDOW]), found[start].start(),
             found[min(len(found), start + WINDOW) - 1].end()) for start in _starts(len(found)) if found]


def window_texts(title: str, spans: list[tuple[str, int, int]]) -> list[str]:
    """What is embedded of each of `spans` (from `window_spans`): the title's content words, then the window's."""
    head = " ".join(content_words(title))
    return [f"{head} {words}".strip() for words, _, _ in spans] or [head]


def query_text(text: str) -> str:
    """A query as the embedder sees it: its content words, or all its words when it has no other."""
    return " ".join(content_words(text) or WORD_RE.findall(text))
