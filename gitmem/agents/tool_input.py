"""A tool call's arguments checked against the tool's input schema before the tool runs: one clear reason, or
None. The model or the MCP client is untrusted input: a wrong type, a null, a list where a string belongs, an
unknown name or a megabyte of text is refused here with what was expected, instead of reaching the tool.

The schemas are gitmem's own (gitmem.agents.schemas, gitmem.sessions.protocol): flat objects of strings,
integers and booleans, so this reads the part of JSON Schema they use (type, properties, required, enum,
minimum, maximum, maxLength) and nothing else.
"""
from __future__ import annotations

from typing import Any

TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "boolean": (bool,),
                                      "number": (int, float)}


def schema_problem(schema: dict[str, Any], arguments: Any) -> str | None:
    """Why `arguments` do not fit `schema` (an object schema), or None. A null optional argument is fine: it
    means "not given" (drop it with `given`)."""
    if not isinstance(arguments, dict):
        return f"the arguments must be an object, not {kind(arguments)}"
    properties: dict[str, Any] = schema.get("properties", {})
    unknown = sorted(name for name in arguments if name not in properties)
    if unknown:
        names = ", ".join(properties) or "none"
        return f"unknown argument {', '.join(map(repr, unknown))[:200]}; the arguments are: {names}"
    for name in schema.get("required", ()):
        if arguments.get(name) is None:
            return f"missing required argument {name!r}"
    for name, value in arguments.items():
        if value is None:
            continue
        reason = _value_problem(properties[name], value)
        if reason is not None:
            return f"{name} {reason}"
    return None


def given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments without the nulls (a null optional argument is one not given)."""
    return {name: value for name, value in arguments.items() if value is not None}


def _value_problem(spec: dict[str, Any], value: Any) -> str | None:
    wanted = spec.get("type")
    types = TYPES.get(wanted, ()) if isinstance(wanted, str) else ()
    if types and (not isinstance(value, types) or (bool not in types and isinstance(value, bool))):
        return f"must be {'an' if wanted == 'integer' else 'a'} {wanted}, not {kind(value)}"
    if isinstance(value, str) and len(value) > spec.get("maxLength", len(value)):
        return f"is {len(value)} characters; the limit is {spec['maxLength']}"
    if "enum" in spec and value not in spec["enum"]:
        return f"must be one of {', '.join(map(str, spec['enum']))}"
    if "minimum" in spec and value < spec["minimum"]:
        return f"must be at least {spec['minimum']}"
    if "maximum" in spec and value > spec["maximum"]:
        return f"must be at most {spec['maximum']}"
    return None


def kind(value: Any) -> str:
    """The JSON name of a value's type, for a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)
