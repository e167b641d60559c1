"""`Section` and `Field`, the two classes a parse builds most of, are records with an `__init__` of their own
(gitmem.memory.sections says why): each takes exactly the class's fields, in order, and the class behaves as the
standard frozen dataclass of the same fields does."""
from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from gitmem.memory.fields import Field
from gitmem.memory.sections import Section

VALUES = {Section: ("Title", 3, 5, ("- Key: v", "")), Field: ("Key", "v", 4, 6)}


@pytest.mark.parametrize("cls", [Section, Field], ids=lambda cls: cls.__name__)
def test_the_own_init_takes_exactly_the_fields_in_order(cls: type) -> None:
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)
    assert [(p.name, p.kind, p.default) for p in parameters] == \
        [(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty) for f in fields]
    assert [p.annotation for p in parameters] == [f.type for f in fields]


@pytest.mark.parametrize("cls", [Section, Field], ids=lambda cls: cls.__name__)
def test_it_behaves_as_the_standard_frozen_dataclass(cls: type) -> None:
    fields = dataclasses.fields(cls)
    standard = dataclasses.make_dataclass(cls.__name__, [(f.name, f.type) for f in fields], frozen=True)
    values = VALUES[cls]
    ours, theirs = cls(*values), standard(*values)
    by_name = dict(zip([f.name for f in fields], values, strict=True))
    assert cls(**by_name) == ours and hash(cls(**by_name)) == hash(ours)
    assert repr(ours) == repr(theirs) and vars(ours) == vars(theirs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    assert ours != cls("Other", *values[1:])
    assert pickle.loads(pickle.dumps(ours)) == ours
    changed = dataclasses.replace(ours, **{fields[0].name: "Other"})
    assert getattr(changed, fields[0].name) == "Other" and changed != ours
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ours, fields[0].name, "x")
    with pytest.raises(TypeError):
        cls(*values[:-1])
    with pytest.raises(TypeError):
        cls(*values, 1)
