"""`gitmem.records.record` behaves as `dataclasses.dataclass` does: each class below is built twice from one body,
once by each decorator, and every behaviour a caller can see is compared (construction and its errors, repr,
equality, hashing, ordering, frozenness, `fields`, `replace`, `asdict`, pattern matching)."""
from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from dataclasses import FrozenInstanceError, field
from typing import Any, ClassVar

import pytest

from gitmem.records import record


def _shapes(decorate: Callable[..., Any]) -> dict[str, type]:
    @decorate(frozen=True)
    class Plain:
        key: str
        value: str
        line: int
        end: int

    @decorate(frozen=True)
    class Defaults:
        when: str
        cycle: int | None = None
        body: tuple[str, ...] = ()
        fields: tuple[str, ...] = field(default=(), compare=False)
        extra: list[int] = field(default_factory=list)
        hidden: str = field(default="h", repr=False)
        loose: int = field(default=0, hash=False)
        counted: ClassVar[int] = 3

    @decorate(frozen=True, order=True)
    class Ordered:
        moment: int
        label: str
        since: int = field(default=1, compare=False)

    @decorate
    class Mutable:
        commits: int = 0
        items: list[str] = field(default_factory=list)

    @decorate(frozen=True)
    class Own:
        a: int
        b: int = 2
        later: int = field(default=5, init=False)

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Own) and self.a == other.a

        def __hash__(self) -> int:
            return 7

    @decorate(frozen=True)
    class Empty:
        pass

    return {"Plain": Plain, "Defaults": Defaults, "Ordered": Ordered, "Mutable": Mutable, "Own": Own,
            "Empty": Empty}


STANDARD, RECORD = _shapes(dataclasses.dataclass), _shapes(record)
CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "Plain": [(("k", "v", 1, 2), {}), ((), {"key": "k", "value": "v", "line": 1, "end": 2}),
              (("k",), {"value": "v", "end": 2, "line": 1}), (("k", "v", 1), {}), (("k", "v", 1, 2, 3), {}),
              (("k",), {"key": "k", "value": "v", "line": 1, "end": 2}), ((), {"key": "k", "value": "v", "line": 1,
                                                                             "stop": 2}),
              ((), {"key": "k", "value": "v", "line": 1, "end": 2, "more": 0})],
    "Defaults": [(("w",), {}), ((), {"when": "w", "cycle": 3, "fields": ("x",)}), (("w", 1, ("b",)), {}),
                 ((), {"cycle": 1}), ((), {"when": "w", "hidden": "z", "loose": 9, "extra": [1]}),
                 ((), {"when": "w", "nope": 1})],
    "Ordered": [((1, "UTC"), {}), ((2, "UTC", 5), {}), ((), {"moment": 1, "label": "+01:00"})],
    "Mutable": [((), {}), ((3,), {}), ((), {"items": ["a"]})],
    "Own": [((1,), {}), ((1, 3), {}), ((), {"a": 1, "later": 2})],
    "Empty": [((), {}), ((1,), {})],
}


def _outcome(action: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "value", action(*args, **kwargs)
    except Exception as err:  # the kind of error is part of the behaviour compared
        return "error", type(err).__name__


def _made(kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    return _outcome(STANDARD[kind], *args, **kwargs), _outcome(RECORD[kind], *args, **kwargs)


def _seen(obj: Any, kind: str) -> dict[str, Any]:
    """What a caller can observe of one instance, with the class's name left out."""
    names = [f.name for f in dataclasses.fields(obj)]
    return {"repr": repr(obj).replace(f"{kind}(", "X("), "values": [getattr(obj, n) for n in names],
            "vars": dict(vars(obj)), "asdict": dataclasses.asdict(obj), "astuple": dataclasses.astuple(obj),
            "hashable": _outcome(hash, obj)[0]}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_construction_and_what_it_shows_match_the_standard_decorator(kind: str) -> None:
    for args, kwargs in CALLS[kind]:
        standard, ours = _made(kind, args, kwargs)
        assert standard[0] == ours[0], (kind, args, kwargs, standard, ours)
        if standard[0] == "error":
            assert ours == standard
        else:
            assert _seen(ours[1], kind) == _seen(standard[1], kind)


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_equality_hashing_and_order_match_the_standard_decorator(kind: str) -> None:
    made = [pair for pair in (_made(kind, a, k) for a, k in CALLS[kind]) if pair[0][0] == "value"]
    for first_standard, first_ours in made:
        for second_standard, second_ours in made:
            for compare in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
                standard = _outcome(getattr(first_standard[1], compare), second_standard[1])
                ours = _outcome(getattr(first_ours[1], compare), second_ours[1])
                assert ours == standard, (kind, compare, first_standard, second_standard)
            if first_standard[1] == second_standard[1] and _seen(first_standard[1], kind)["hashable"] == "value":
                assert hash(first_ours[1]) == hash(second_ours[1])
        assert (first_ours[1] == (1, 2)) is (first_standard[1] == (1, 2)) is False
        stranger = object()
        assert first_ours[1].__eq__(stranger) is first_standard[1].__eq__(stranger)


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_frozenness_fields_replace_and_matching_match_the_standard_decorator(kind: str) -> None:
    standard_cls, ours_cls = STANDARD[kind], RECORD[kind]
    assert [(f.name, f.default, f.compare, f.repr, f.init, f.hash, dict(f.metadata))
            for f in dataclasses.fields(ours_cls)] == [(f.name, f.default, f.compare, f.repr, f.init, f.hash,
                                                        dict(f.metadata)) for f in dataclasses.fields(standard_cls)]
    assert ours_cls.__match_args__ == standard_cls.__match_args__
    assert dataclasses.is_dataclass(ours_cls)
    for name in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(ours_cls.__dataclass_params__, name) == getattr(standard_cls.__dataclass_params__, name)
    args, kwargs = CALLS[kind][0]
    standard, ours = standard_cls(*args, **kwargs), ours_cls(*args, **kwargs)
    for change in ({"x": 1}, *({f.name: 0} for f in dataclasses.fields(standard_cls))):
        name, value = next(iter(change.items()))
        assert _outcome(setattr, ours, name, value)[1] == _outcome(setattr, standard, name, value)[1]
        assert _outcome(delattr, ours, name)[1] == _outcome(delattr, standard, name)[1]
        replaced = _outcome(dataclasses.replace, ours, **change)
        assert replaced[0] == _outcome(dataclasses.replace, standard, **change)[0]


def test_a_frozen_record_refuses_assignment_as_the_standard_one_does() -> None:
    plain = RECORD["Plain"]("k", "v", 1, 2)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'line'"):
        plain.line = 3
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'key'"):
        del plain.key
    assert sorted([RECORD["Ordered"](2, "a"), RECORD["Ordered"](1, "b", 9)]) == [RECORD["Ordered"](1, "b"),
                                                                                RECORD["Ordered"](2, "a")]


def test_options_a_record_does_not_implement_are_refused_not_ignored() -> None:
    with pytest.raises(TypeError):
        record(slots=True)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="keyword-only"):
        @record(frozen=True)
        class KeywordOnly:
            a: int = field(default=0, kw_only=True)
    standard = dataclasses.dataclass(frozen=True)(type("Base", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="does not inherit from a dataclass"):
        record(frozen=True)(type("Child", (standard,), {"__annotations__": {"b": "int"}}))


def test_records_build_their_methods_without_compiling_source() -> None:
    """The point of `record`: `@dataclass` compiles each method with exec() (code from "<string>")."""
    from gitmem.config import Config
    from gitmem.memory.log import LogEntry

    for cls in (*RECORD.values(), Config, LogEntry):
        for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__lt__"):
            method = cls.__dict__.get(name)
            code = getattr(getattr(method, "__wrapped__", method), "__code__", None)
            assert code is None or code.co_filename != "<string>", (cls, name)
    assert STANDARD["Plain"].__init__.__code__.co_filename == "<string>"


def test_gitmem_records_survive_a_pickle_round_trip() -> None:
    from gitmem.checks.violation import Violation
    from gitmem.config import Config

    for value in (Config(), Violation("LOG.md", 3, "GM301", "a message")):
        assert pickle.loads(pickle.dumps(value)) == value


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_a_record_without_a_docstring_gets_the_standard_decorators(kind: str) -> None:
    assert RECORD[kind].__doc__ == STANDARD[kind].__doc__


def test_a_docstring_of_the_classs_own_is_kept_and_so_is_the_signature_of_its_own_init() -> None:
    docs = []
    for decorate in (dataclasses.dataclass, record):
        @decorate(frozen=True)
        class Documented:
            """What it is."""
            a: int

        @decorate
        class OwnInit:
            a: int = 1

            def __init__(self, b: str) -> None:
                self.a = len(b)

        assert Documented.__doc__ == "What it is."
        docs.append(OwnInit.__doc__)
    assert docs[0] == docs[1] and docs[0].startswith("OwnInit(b: 'str')")


def test_a_record_is_built_without_tokenizing_a_signature() -> None:
    """The standard decorator reads a docstring-less class's signature through inspect; before the __init__ exists,
    inspect tokenizes object's text signature, compiling tokenize's large pattern (2.3 ms) on first use."""
    import tokenize
    from unittest import mock

    with mock.patch.object(tokenize, "generate_tokens", side_effect=AssertionError("tokenized")), \
            mock.patch.object(tokenize, "_tokenize", side_effect=AssertionError("tokenized")):
        _shapes(record)
