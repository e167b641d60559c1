"""One parse of each memory text per process.

A cycle's steps (preflight, the checks before and after the agent, the context, postflight) and a close's each
ask for the same file parsed; at 100x DECISIONS is 1.7 MB and LESSONS 3,000 lessons. The documents are frozen,
so the one parse of a text is shared by everyone who reads that text. A text is found again by identity, else
by equality (a memcmp, C speed); a few of the latest texts are kept per parser, so memory stays what the
process held anyway.

The same holds one level down, for the bytes of a file: decoding a 75 MB LOG, or scanning its headings, is
done once for the bytes a process read, however many of its steps read the file again and find it unchanged.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable
from typing import Concatenate, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", str, bytes)
KEPT = 3        # texts kept per parser: the old and new sides of a change, and one more


def kept_once(kept: int) -> Callable[[Callable[Concatenate[S, P], T]], Callable[Concatenate[S, P], T]]:
    """`parsed_once` keeping the `kept` latest texts: as many as the distinct texts a process reads in turn
    (one per memory file, for a reader of every file)."""
    def decorate(parse: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
        seen: list[tuple[S, tuple[object, ...], T]] = []

        @functools.wraps(parse)
        def shared(text: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
            options = (*args, *sorted(kwargs.items()))
            for index, (known, known_options, doc) in enumerate(seen):
                if known_options == options and (known is text or known == text):
                    if index:
                        seen.insert(0, seen.pop(index))
                    return doc
            doc = parse(text, *args, **kwargs)
            seen.insert(0, (text, options, doc))
            del seen[kept:]
            return doc

        return shared

    return decorate


def parsed_once(parse: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """`parse`, answering a text it parsed before (with the same options) from what it returned then."""
    return kept_once(KEPT)(parse)


E = TypeVar("E", bound=Hashable)


class SameEntries(Generic[E]):
    """One object for an entry that successive parses of a file find unchanged.

    A close reads LESSONS and DECISIONS as HEAD holds them and as it leaves them, and most of their 3,000 and
    4,000 entries (at 100x) are the same in both. An entry is frozen and equal only to one with the same ID,
    heading, body and lines, so the one object can stand for both, with what was read from it (its fields, its
    events, its times) read once. Only the latest parse's entries are kept, as they are: they are looked up only
    when a next parse asks (hashing 4,000 decisions is a cost a process that parses DECISIONS once never needs).
    """

    def __init__(self) -> None:
        self._latest: tuple[E, ...] = ()

    def shared(self, entries: Iterable[E]) -> tuple[E, ...]:
        latest = self._latest
        if latest:
            known = dict(zip(latest, latest, strict=True))
            found = tuple(known.get(entry, entry) for entry in entries)
        else:
            found = tuple(entries)
        self._latest = found
        return found

    def remember(self, entries: tuple[E, ...]) -> tuple[E, ...]:
        """`entries` as the latest parse's, for a parser that found the unchanged ones itself (`resplit`)."""
        self._latest = entries
        return entries


K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The values of the last `kept` keys asked, found again by equality (bytes compare at C speed): a verdict
    that is a function of its key alone, kept for the step of the same process that asks again."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._items: list[tuple[K, V]] = []

    def get(self, key: K) -> V | None:
        for index, (known, value) in enumerate(self._items):
            if known == key:
                self._items.insert(0, self._items.pop(index))
                return value
        return None

    def put(self, key: K, value: V) -> None:
        self._items.insert(0, (key, value))
        del self._items[self.kept:]
