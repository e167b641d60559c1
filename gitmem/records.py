"""`record`: `dataclasses.dataclass` for the classes on the pre-commit path, built without `exec()`.

The standard decorator writes the source of each method it adds (`__init__`, `__repr__`, `__eq__`, `__hash__`,
and a frozen class's `__setattr__` and `__delattr__`, an ordered one's four comparisons) and compiles it with
`exec()` when the class is created: about 0.5 ms a class on every `gitmem check`, for some thirty classes, most
of gitmem's own start-up. `record` lets the standard decorator collect the fields (so `dataclasses.fields`,
`replace`, `asdict` and `is_dataclass` work unchanged), then adds the same methods as closures over those
fields: nothing is compiled. A type checker sees the standard decorator itself.

It takes the options gitmem's records use (`frozen`, `order`); any other is refused rather than ignored.
tests/project/test_records.py holds its classes to the standard decorator's behaviour. `built_whole` builds an
instance of such a class with its `__dict__` set whole, for the records a parse makes by the thousand.
"""
from __future__ import annotations

import dataclasses
import inspect
from operator import attrgetter, itemgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["built_whole", "record"]

T = TypeVar("T")

if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:
    def record(cls: type | None = None, /, *, frozen: bool = False, order: bool = False) -> Any:
        """`@dataclass`, `@dataclass(frozen=True)`, `@dataclass(frozen=True, order=True)`, without exec()."""
        def wrap(cls: type) -> type:
            return _build(cls, frozen=frozen, order=order)

        return wrap if cls is None else wrap(cls)


def _tuple_getter(getter: Any, names: tuple[str, ...]) -> Any:
    """A function giving the tuple of `getter(*names)`'s values, one value or none included (`attrgetter` of an
    instance's fields, as the standard methods compare; `itemgetter` of a mapping's keys, KeyError if one is
    missing): `attrgetter("a")` alone gives a bare value, not a 1-tuple."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = getter(names[0])
        return lambda obj: (one(obj),)
    return getter(*names)


def _set(cls: type, name: str, value: Any) -> None:
    """Add a method the class does not define itself (the standard decorator keeps the class's own)."""
    if name not in cls.__dict__:
        value.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, value)


def _build(cls: type, *, frozen: bool, order: bool) -> type:
    # Fields, defaults, __match_args__ and abstract methods, by the standard decorator: it compiles nothing
    # when it adds no methods.
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record does not inherit from a dataclass")
    # A class without a docstring gets "Name(field: 'type', ...)" from the standard decorator, read through
    # inspect from an __init__ that does not exist yet here: inspect then tokenizes object's text signature,
    # and tokenize's pattern is compiled on first use (2.3 ms of every `gitmem check`). A stand-in keeps the
    # decorator from looking; `_docstring` writes the real one from the fields.
    documented = bool(cls.__doc__)
    cls.__doc__ = cls.__doc__ or cls.__name__
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    params = cls.__dataclass_params__          # type: ignore[attr-defined]
    params.init = params.repr = params.eq = True
    params.order, params.frozen = order, frozen
    every = dataclasses.fields(cls)
    names = frozenset(f.name for f in every)
    pseudo = [f for name, f in cls.__dataclass_fields__.items() if name not in names]  # type: ignore[attr-defined]
    if any(f.kw_only for f in every) or any("InitVar" in str(f.type) for f in pseudo):
        raise TypeError(f"{cls.__qualname__}: record takes no keyword-only or InitVar fields")
    # The standard rule, judged before `__eq__` is added: a `__hash__` of the class's own is kept (Python's
    # None for a class that defines `__eq__` is not one); otherwise a frozen record hashes its fields and a
    # mutable one is unhashable.
    hash_in_body = cls.__dict__.get("__hash__", dataclasses.MISSING)
    own_hash = not (hash_in_body is dataclasses.MISSING or (hash_in_body is None and "__eq__" in cls.__dict__))
    if not documented:
        cls.__doc__ = _docstring(cls, every)
    _set(cls, "__init__", _init(cls, every, frozen))
    shown = tuple(f.name for f in every if f.repr)

    @recursive_repr()
    def __repr__(self: Any) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    _set(cls, "__repr__", __repr__)
    compared = _tuple_getter(attrgetter, tuple(f.name for f in every if f.compare))

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    _set(cls, "__eq__", __eq__)
    if not own_hash:
        if frozen:
            hashed_names = tuple(f.name for f in every if (f.compare if f.hash is None else f.hash))
            hashed = _tuple_getter(attrgetter, hashed_names)

            def __hash__(self: Any) -> int:
                return hash(hashed(self))

            __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
            cls.__hash__ = __hash__  # type: ignore[method-assign,assignment]
        else:
            cls.__hash__ = None  # type: ignore[assignment]
    if order:
        _add_order(cls, compared)
    if frozen:
        _add_frozen(cls, names)
    return cls


def _docstring(cls: type, every: tuple[dataclasses.Field[Any], ...]) -> str:
    """The standard decorator's docstring for a class without one, `Name(key: 'str', cycle: 'int | None' = None,
    extra: 'list[int]' = <factory>)`: the class's name and its __init__'s signature as inspect prints it. Written
    here from the fields (inspect would build a Signature for it, about 50 µs a class); called before the
    __init__ is added, so that an __init__ of the class's own is the one shown."""
    if "__init__" in cls.__dict__:
        try:
            return cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):        # as the standard decorator: a signature it cannot read is left out
            return cls.__name__
    shown = []
    for f in every:                     # a field always has an annotation: `name: 'type'`, then ` = default`
        if f.init:
            default = (f" = {f.default!r}" if f.default is not dataclasses.MISSING else
                       " = <factory>" if f.default_factory is not dataclasses.MISSING else "")
            shown.append(f"{f.name}: {inspect.formatannotation(f.type)}{default}")
    return f"{cls.__name__}({', '.join(shown)})"


def _init(cls: type, every: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Any:
    given = tuple(f.name for f in every if f.init)
    defaults = {f.name: f.default for f in every if f.default is not dataclasses.MISSING}
    factories = {f.name: f.default_factory for f in every if f.default_factory is not dataclasses.MISSING}
    unset = tuple(f.name for f in every if not f.init)
    post_init = hasattr(cls, "__post_init__")
    name = cls.__qualname__

    def bound(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Every init field's value in field order, from the call's arguments and the defaults."""
        if len(args) > len(given):
            raise TypeError(f"{name}.__init__() takes {len(given) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = list(args)
        for key in given[len(args):]:
            if key in kwargs:
                values.append(kwargs.pop(key))
            elif key in defaults:
                values.append(defaults[key])
            elif key in factories:
                values.append(factories[key]())
            else:
                raise TypeError(f"{name}.__init__() missing required argument: {key!r}")
        if kwargs:
            key = next(iter(kwargs))
            why = "got multiple values for argument" if key in given else "got an unexpected keyword argument"
            raise TypeError(f"{name}.__init__() {why} {key!r}")
        return tuple(values)

    # Keyword calls without a factory to run, the usual kind, are bound by C code: the defaults and the
    # arguments merged, then read in field order.
    plain_defaults = {key: value for key, value in defaults.items() if key in given}
    in_order = _tuple_getter(itemgetter, given)
    count = len(given)

    def values_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if not args and len(merged := {**plain_defaults, **kwargs}) == count:
            try:
                return in_order(merged)  # type: ignore[no-any-return]
            except KeyError:                     # an unknown keyword in place of a missing one
                pass
        return bound(args, kwargs)

    if frozen and not unset and not post_init:
        # Every record of gitmem's: the fields, stored as object.__setattr__ stores each (a record's fields
        # are plain instance attributes: no slots, no descriptors), in one call.
        def frozen_init(self: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs or len(args) != count:
                args = values_of(args, kwargs)
            self.__dict__.update(zip(given, args, strict=False))     # the lengths are equal here

        frozen_init.__name__ = "__init__"
        return frozen_init

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != count:
            args = values_of(args, kwargs)
        for key, value in zip(given, args, strict=True):
            object.__setattr__(self, key, value) if frozen else setattr(self, key, value)
        for key in unset:              # as the standard one: a plain default stays the class's attribute
            if key in factories:
                object.__setattr__(self, key, factories[key]())
        if post_init:
            self.__post_init__()

    return __init__


def _add_order(cls: type, compared: Any) -> None:
    def __lt__(self: Any, other: Any) -> Any:
        return compared(self) < compared(other) if other.__class__ is self.__class__ else NotImplemented

    def __le__(self: Any, other: Any) -> Any:
        return compared(self) <= compared(other) if other.__class__ is self.__class__ else NotImplemented

    def __gt__(self: Any, other: Any) -> Any:
        return compared(self) > compared(other) if other.__class__ is self.__class__ else NotImplemented

    def __ge__(self: Any, other: Any) -> Any:
        return compared(self) >= compared(other) if other.__class__ is self.__class__ else NotImplemented

    for method in (__lt__, __le__, __gt__, __ge__):
        if method.__name__ in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {method.__name__} in class {cls.__name__}. "
                            "Consider using functools.total_ordering")
        _set(cls, method.__name__, method)


def _add_frozen(cls: type[Any], names: frozenset[str]) -> None:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for method in (__setattr__, __delattr__):
        if method.__name__ in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {method.__name__} in class {cls.__name__}")
        _set(cls, method.__name__, method)


_new = object.__new__
_set_attribute = object.__setattr__


def built_whole(cls: type[T], values: dict[str, Any]) -> T:
    """`cls(**values)` for a frozen dataclass of `values`' fields, in their order, with no default to fill
    and no `__post_init__`: its `__dict__` is set whole, where the frozen `__init__` calls `object.__setattr__`
    once per field (three times slower; a whole DECISIONS holds 24,000 fields at 100x, LESSONS 10,000 events).
    What it builds equals, hashes and prints as the dataclass's own (tests/memory/test_parse_equivalence.py)."""
    made = _new(cls)
    _set_attribute(made, "__dict__", values)
    return made
