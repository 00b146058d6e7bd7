"""The values a template can use: each remembers the bed field it came from and how a shell takes it.

Every shell-facing form goes through `topology.quoting` (`quote`, `quote_list`, `powershell`), so a
bed value reaches a command as data, never as code.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from topology import quoting
from topology.unknown import MARKER, NOT_STATED
from topology.vocabulary import humanize

_TOKEN_SAFE = re.compile(r"^[A-Za-z0-9 ,()./:_+=-]*$")


@dataclass(slots=True)
class Val:
    """A value a template can use: its prose form, where it came from, and how a shell takes it.

    kind: "text" (quoted in commands); "number" (bare); "token" (built by code from numbers, IP
    addresses and fixed words: bare in vendor statements, quoted for a shell); "literal" (a template's own `derive`
    output: bare); "bool" ($true / true); "list" (quoted item by item); "not_stated" (the source does
    not give it: prose says "not stated", and no command is built from it)."""
    text: str
    source: str = ""
    kind: str = "text"
    items: tuple[str, ...] = ()
    quoted: dict | None = None     # shell -> quoted form, filled on first use
    # filled in by the tool, not stated by the bed (an auto-numbered LUN): never reaches a
    # command that writes to a disk (`destructive:` steps)
    assumed: bool = False

    def match_text(self) -> str:
        if self.kind == "not_stated":
            return ""
        if self.kind == "bool":
            return "true" if self.text == "yes" else "false"
        if self.kind == "list":
            return " ".join(self.items)
        return self.text

    def shell_text(self, shell: str) -> str:
        q = self.quoted
        if q is None:
            q = self.quoted = {}
        hit = q.get(shell)
        if hit is None:
            hit = q[shell] = self._shell_text(shell)
        return hit

    def _shell_text(self, shell: str) -> str:
        if self.kind == "number" or self.kind == "literal":
            return self.text
        if self.kind == "token":
            # bare only in vendor statements (`physicalDisks=(0,1 0,2)`); a shell always gets one word
            return self.text if shell == "vendor-cli" else quoting.quote(shell, self.text)
        if self.kind == "bool":
            yes = self.text == "yes"
            return {"powershell": "$true" if yes else "$false",
                    "vendor-cli": "TRUE" if yes else "FALSE"}.get(shell, "true" if yes else "false")
        if self.kind == "list":
            return quoting.quote_list(shell, self.items)
        return quoting.quote(shell, self.text)


Values = dict[str, Val]
# reads one plain field of a component into a value (as_text, as_number ...), with the field it came from
ValueKind = Callable[[Any, str], Val | None]


class ValueLayers:
    """Value lookup through several dicts (derived, item, globals) without merging them per step."""
    __slots__ = ("layers",)

    def __init__(self, *layers: Any):
        self.layers = layers

    def get(self, name: str) -> Val | None:
        for layer in self.layers:
            v = layer.get(name)
            if v is not None:
                return v
        return None

    def __bool__(self) -> bool:
        return True


def not_stated(source: str = "") -> Val:
    """The value of a field marked `not stated` (`topology.unknown`)."""
    return Val(MARKER, source, "not_stated")


def as_text(v: Any, source: str = "") -> Val | None:
    if v.__class__ is str:   # the common case first (NOT_STATED is a str subclass)
        s = v.strip()
        return Val(s, source) if s else None
    if v is None:
        return None
    if v is NOT_STATED:
        return not_stated(source)
    s = str(v).strip() if not isinstance(v, str) else v.strip()
    return Val(s, source) if s else None


def assumed(v: Val | None) -> Val | None:
    """The value, marked as one the tool filled in (`Val.assumed`)."""
    if v is not None:
        v.assumed = True
    return v


def format_number(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.3f}".rstrip("0").rstrip(".")


def as_number(v: Any, source: str = "") -> Val | None:
    if v.__class__ is int:   # the common case first: a count, a port index (through float, as every number)
        return Val(str(int(float(v))), source, "number")
    if v is NOT_STATED:
        return not_stated(source)
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    if x != x or x in (float("inf"), float("-inf")):
        return None
    return Val(format_number(x), source, "number")


def scaled(v: Any, factor: float, source: str = "") -> Val | None:
    """A number converted (minutes to seconds, GB to MB) and rounded; "not stated" stays so."""
    if v is NOT_STATED:
        return not_stated(source)
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return as_number(round(v * factor), source)


def as_bool(v: Any, source: str = "") -> Val | None:
    if v is None:
        return None
    if v is NOT_STATED:
        return not_stated(source)
    return Val("yes" if v else "no", source, "bool")


def as_token(v: str, source: str = "") -> Val | None:
    if v is NOT_STATED:
        return not_stated(source)
    if v is None or v == "":
        return None
    v = str(v)
    return Val(v, source, "token" if _TOKEN_SAFE.match(v) else "text")


def as_list(items: Iterable[Any], source: str = "") -> Val | None:
    if items is NOT_STATED:
        return not_stated(source)
    clean = tuple(str(i).strip() for i in items if i is not None and str(i).strip())
    if not clean:
        return None
    return Val(", ".join(clean), source, "list", clean)


def plain(v: Any) -> str:
    """A free-form setting or parameter as prose."""
    if v is NOT_STATED:
        return MARKER
    if isinstance(v, bool):
        return "enabled" if v else "disabled"
    if isinstance(v, float):
        return format_number(v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {plain(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(plain(x) for x in v)
    return "" if v is None else str(v)


def as_plain_text(v: Any, source: str = "") -> Val | None:
    return not_stated(source) if v is NOT_STATED else as_text(plain(v), source)


def as_any(v: Any, source: str) -> Val | None:
    if v is NOT_STATED:
        return not_stated(source)
    if isinstance(v, bool):
        return as_bool(v, source)
    if isinstance(v, (int, float)):
        return as_number(v, source)
    if isinstance(v, (list, tuple)):
        return as_list((plain(x) for x in v), source)
    return as_text(plain(v), source)


def size_text(gb: float | None) -> str:
    if gb is NOT_STATED:
        return MARKER
    if gb is None:
        return ""
    if gb >= 1024 and float(gb / 1024).is_integer():
        return f"{format_number(gb / 1024)} TB"
    return f"{format_number(gb)} GB"


# The parsers below accept what an address field may hold and say None to the rest: a value built
# from their result is a validated token, safe bare in a command.
@lru_cache(maxsize=65536)
def interface_of(address: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if not address:
        return None
    try:
        return ipaddress.ip_interface(address.strip())
    except ValueError:
        return None


def network_of(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(cidr.strip(), strict=False) if cidr else None
    except ValueError:
        return None


# ---- putting values into an item's dict: an absent value (None) is left out, so templates see it missing

def field_names(prefix: str, *fields: str) -> set[str]:
    return {f"{prefix}.{f}" for f in fields}


def put(vals: Values, name: str, val: Val | None) -> None:
    if val is not None:
        vals[name] = val


def setting_entries(base: Values, prefix: str, mapping: dict, source: str,
                    make: Callable[[Any, str], Val | None] = as_any) -> Iterator[tuple[int, Values, str, Any]]:
    """For each `key: value` of a free-form mapping (BIOS, switch settings, workload parameters): its
    position, a copy of `base` with `prefix.name`, `.label` (readable) and `.value`, its source and value."""
    for position, (key, value) in enumerate(mapping.items()):
        vals = dict(base)
        src = f"{source}.{key}"
        put(vals, f"{prefix}.name", as_text(key, src))
        put(vals, f"{prefix}.label", as_text(humanize(key), src))
        put(vals, f"{prefix}.value", make(value, src))
        yield position, vals, src, value


def put_fields(vals: Values, prefix: str, obj: Any, source: str, kinds: dict[str, ValueKind]) -> None:
    """For each NAME of `kinds`: `prefix.NAME`, made by its kind from `obj.NAME`, from field `source.NAME`.
    A dict of kinds is a domain's list of plain fields: adding one there is all a new plain value takes."""
    for name, kind in kinds.items():
        put(vals, f"{prefix}.{name}", kind(getattr(obj, name), f"{source}.{name}"))


def put_address(vals: Values, prefix: str, address: str, source: str) -> None:
    """`prefix.ip` of an address, and when it has a prefix length `prefix.prefix` and (IPv4) `prefix.mask`."""
    if address is NOT_STATED:
        for part in ("ip", "prefix", "mask"):
            put(vals, f"{prefix}.{part}", not_stated(source))
        return
    i = interface_of(address)
    if i is not None:
        put(vals, f"{prefix}.ip", as_token(str(i.ip), source))
        if "/" in address:
            put(vals, f"{prefix}.prefix", as_number(i.network.prefixlen, source))
            if i.version == 4:
                put(vals, f"{prefix}.mask", as_token(str(i.netmask), source))
