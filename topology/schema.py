"""JSON Schema of the project file, generated from the model's field declarations.

`resources/schema/testbed.schema.json` is this output; a test keeps the two equal, so
editors that validate YAML against the schema see exactly what the loader accepts, including
where a field may hold `not stated` (`$defs/NotStated`) instead of its value.
"""
from __future__ import annotations

import json
from typing import Any

from topology.field_plan import plan
from topology.fields import DEFAULT_MAXIMUM, PATH_PART_PATTERN
from topology.model import FORMAT_VERSION, Bed
from topology.unknown import MARKER, accepts_not_stated

SCHEMA_ID = "https://testbed-studio.invalid/schema/testbed.schema.json"

_NOT_STATED = "NotStated"   # the marker any value field may hold instead of its value
_REF_PATTERNS = {
    "port": r"^[^:]+:[^:]+$",
    "volume": r"^[^:]+:[^:]+$",
}


def _scalar_schema(kind: str, meta: dict) -> dict[str, Any]:
    if kind == "str":
        out: dict[str, Any] = {"type": "string"}
        if meta.get("choices"):
            out["enum"] = list(meta["choices"])
        if meta.get("pattern"):
            out["pattern"] = meta["pattern"]
        if meta.get("path_part"):
            out["pattern"] = PATH_PART_PATTERN
        ref = meta.get("ref")
        if ref in _REF_PATTERNS:
            out["pattern"] = _REF_PATTERNS[ref]
        return out
    if kind in ("int", "float"):
        out = {"type": "integer" if kind == "int" else "number"}
        maximum = meta.get("maximum")
        out["minimum"] = -DEFAULT_MAXIMUM[kind] if meta.get("minimum") is None else meta["minimum"]
        out["maximum"] = DEFAULT_MAXIMUM[kind] if maximum is None else maximum
        return out
    if kind == "bool":
        return {"type": "boolean"}
    return {}


def _field_schema(cls: type, fp, defs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any]
    if fp.kind == "dc":
        out = {"$ref": f"#/$defs/{_define(fp.inner, defs)}"}
    elif fp.kind == "list":
        ik, itp = fp.inner
        item = {"$ref": f"#/$defs/{_define(itp, defs)}"} if ik == "dc" else _scalar_schema(ik, fp.meta)
        out = {"type": "array", "items": item}
    elif fp.kind == "dict":
        out = {"type": "object"}
        if fp.inner is str:
            out["additionalProperties"] = {"type": "string"}
    else:
        out = _scalar_schema(fp.kind, fp.meta)
    if accepts_not_stated(cls, fp):
        defs.setdefault(_NOT_STATED, {"const": MARKER,
                                      "description": "the source does not state this value (topology.unknown)"})
        out = {"anyOf": [out, {"$ref": f"#/$defs/{_NOT_STATED}"}]}
    if fp.meta.get("doc"):
        out = {**out, "description": fp.meta["doc"]}
    return out


def _define(cls: type, defs: dict[str, Any]) -> str:
    name = cls.__name__
    if name in defs:
        return name
    defs[name] = {}  # placeholder against recursion
    props = {}
    required = []
    for fp in plan(cls):
        props[fp.key] = _field_schema(cls, fp, defs)
        if fp.required:
            required.append(fp.key)
    body: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": props}
    if required:
        body["required"] = required
    doc = (cls.__doc__ or "").strip().splitlines()
    if doc and doc[0]:
        body["description"] = doc[0]
    defs[name] = body
    return name


def project_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    root = _define(Bed, defs)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
              "title": "Testbed Studio project file",
              "description": f"A storage / virtualization test bed (format_version {FORMAT_VERSION}). "
                             "References (DEVICE:PORT, ARRAY:VOLUME, names) are checked by the loader.",
              **defs[root]}
    schema["required"] = ["format_version", "bed"]
    defs.pop(root)
    schema["$defs"] = dict(sorted(defs.items()))
    return schema


def schema_text() -> str:
    return json.dumps(project_schema(), indent=2, sort_keys=False) + "\n"
