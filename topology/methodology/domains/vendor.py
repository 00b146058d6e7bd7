"""Domains that vendor CLIs need one item at a time: the FC zones declared on each switch (zoning is
done on the switch), and each initiator of each host an array defines (an SMcli `create hostPort` or
`create iscsiInitiator` statement per WWPN or IQN)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from topology.ids import SEP
from topology.methodology.context import BedContext
from topology.methodology.domains.registry import Item, domain
from topology.methodology.domains.storage import ARRAY_NAMES
from topology.methodology.domains.storage import _array_items as array_items
from topology.methodology.domains.switches import SWITCH_NAMES
from topology.methodology.domains.switches import _switch_values as switch_values
from topology.methodology.values import (
    ValueKind,
    Values,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    not_stated,
    put,
    put_fields,
)
from topology.model import StorageArray
from topology.unknown import NOT_STATED

_WWPN = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){7}$", re.I)


def _ports_by_wwpn(ctx: BedContext) -> dict[str, str]:
    """WWPN (lower case) -> the DEVICE:PORT that has it."""
    return {pr.port.wwpn.strip().lower(): ref for ref, pr in ctx.idx.ports.items() if getattr(pr.port, "wwpn", "")}


def _wwpn_of(ctx: BedContext, member: str, by_wwpn: dict[str, str]) -> tuple[str, str]:
    """(the WWPN a zone member or an initiator names, the port it belongs to): a WWPN as written, or a
    DEVICE:PORT's own WWPN; ('', '') when neither."""
    text = member.strip()
    if _WWPN.match(text):
        wwpn = text.lower()
        return wwpn, by_wwpn.get(wwpn, "")
    if SEP in text:
        pr = ctx.idx.port(text)
        wwpn = (getattr(pr.port, "wwpn", "") or "").strip() if pr is not None else ""
        if pr is not None and _WWPN.match(wwpn):
            return wwpn.lower(), pr.ref
    return "", ""


ZONE_NAMES = SWITCH_NAMES | field_names("zone", "name", "cli_name", "config", "config_name", "index", "first", "last",
                                        "members", "member_ports", "wwpns", "wwpn_list", "wwpn_words", "count", "note")


@domain("zone", ZONE_NAMES, "each FC zone declared on each switch (zoning is done on the switch)")
def _zones(ctx: BedContext) -> list[Item]:
    out = []
    by_wwpn = _ports_by_wwpn(ctx)
    for i, sw in enumerate(ctx.bed.switches):
        if sw.simulated or not sw.zones:
            continue
        base = switch_values(ctx, sw)
        for j, z in enumerate(sw.zones):
            vals = dict(base)
            src = f"{sw.id}.zones[{j}]"
            put(vals, "zone.name", as_text(z.name, f"{src}.name"))
            # bare in a switch CLI statement only when it is a plain word (a name that is not stays quoted)
            put(vals, "zone.cli_name", as_token(z.name, f"{src}.name"))
            config = sw.settings.get("zone_configuration")
            if isinstance(config, str) and config.strip():
                put(vals, "zone.config", as_token(config.strip(), f"{sw.id}.settings.zone_configuration"))
                # the same name as a quoted string, for a CLI whose syntax quotes names (Brocade)
                put(vals, "zone.config_name", as_text(config.strip(), f"{sw.id}.settings.zone_configuration"))
            put(vals, "zone.index", as_number(j + 1))
            put(vals, "zone.first", as_bool(j == 0))
            put(vals, "zone.last", as_bool(j == len(sw.zones) - 1))
            put(vals, "zone.count", as_number(len(sw.zones)))
            put(vals, "zone.note", as_text(z.note, f"{src}.note"))
            put(vals, "zone.members", as_list(z.members, f"{src}.members"))
            resolved = [_wwpn_of(ctx, m, by_wwpn) for m in z.members]
            put(vals, "zone.member_ports", as_list([port or m for (_, port), m in zip(resolved, z.members)],
                                                   f"{src}.members"))
            if resolved and all(w for w, _ in resolved):
                # every member as a WWPN (a member the bed gives no WWPN for leaves the zone to be done by hand)
                put(vals, "zone.wwpns", as_list([w for w, _ in resolved], f"{src}.members"))
                put(vals, "zone.wwpn_list", as_token("; ".join(w for w, _ in resolved), f"{src}.members"))
                put(vals, "zone.wwpn_words", as_token(" ".join(w for w, _ in resolved), f"{src}.members"))
            out.append(Item(vals, sw.id, "switch", (i,), 400 + j))
    return out


_ARRAY_HOST_PLAIN: dict[str, ValueKind] = {"name": as_text, "server": as_text, "host_type": as_text,
                                            "host_group": as_text}
INITIATOR_NAMES = ARRAY_NAMES | field_names("array_host", *_ARRAY_HOST_PLAIN) | \
    field_names("initiator", "name", "kind", "wwpn", "wwpn_hex", "iqn", "port", "label", "index")


def _initiator_values(ctx: BedContext, host: Any, text: str, k: int, src: str, by_wwpn: dict[str, str]) -> Values:
    vals: Values = {}
    put(vals, "initiator.name", as_text(text, src))
    put(vals, "initiator.index", as_number(k + 1))
    low = text.strip().lower()
    wwpn, port = _wwpn_of(ctx, text, by_wwpn)
    pr = ctx.idx.port(text.strip()) if not wwpn and SEP in text else None
    if wwpn:
        put(vals, "initiator.kind", as_token("fc"))
        put(vals, "initiator.wwpn", as_token(wwpn, src))
        put(vals, "initiator.wwpn_hex", as_text(wwpn.replace(":", ""), src))
    elif low.startswith(("iqn.", "eui.", "naa.")):
        put(vals, "initiator.kind", as_token("iscsi"))
        put(vals, "initiator.iqn", as_text(text.strip(), src))
    elif pr is not None and getattr(pr.port, "kind", "") == "fc":
        # an FC port of the bed whose WWPN the source does not give: an FC host port all the same
        put(vals, "initiator.kind", as_token("fc"))
        port = pr.ref
        wwpn_field = getattr(pr.port, "wwpn", "")
        put(vals, "initiator.wwpn", not_stated(f"{pr.ref}.wwpn") if wwpn_field is NOT_STATED else None)
        put(vals, "initiator.wwpn_hex", not_stated(f"{pr.ref}.wwpn") if wwpn_field is NOT_STATED else None)
    if port:
        put(vals, "initiator.port", as_text(port, src))
    label = port.replace(SEP, "-") if port else f"{host.name}-{k + 1}"
    put(vals, "initiator.label", as_text(label, src))
    return vals


@domain("array_initiator", INITIATOR_NAMES, "each initiator (WWPN or IQN) of each host an array defines")
def _array_initiators(ctx: BedContext) -> list[Item]:
    by_wwpn = _ports_by_wwpn(ctx)

    def per(a: StorageArray, base: Values) -> Iterator[tuple[Values, str]]:
        for h in a.hosts:
            yield from _initiators_of(ctx, a, h, base, by_wwpn)
    return array_items(ctx, 6000, per)


ACCESS_NAMES = INITIATOR_NAMES | field_names("mapping", "volume", "to", "lun")


@domain("mapping_initiator", ACCESS_NAMES,
        "each initiator of each host a volume is mapped to (an access record per volume and initiator)")
def _mapping_initiators(ctx: BedContext) -> list[Item]:
    by_wwpn = _ports_by_wwpn(ctx)

    def per(a: StorageArray, base: Values) -> Iterator[tuple[Values, str]]:
        behind: dict[str, list[Any]] = {}     # host or host-group name -> the array hosts it stands for
        for h in a.hosts:
            behind.setdefault(h.name, []).append(h)
            if h.host_group and h.host_group != h.name:
                behind.setdefault(h.host_group, []).append(h)
        for m in a.mappings:
            mapping = dict(base)
            put(mapping, "mapping.volume", as_text(m.volume, f"{a.id}.mappings"))
            put(mapping, "mapping.to", as_text(m.to, f"{a.id}.mappings"))
            put(mapping, "mapping.lun", as_number(m.lun, f"{a.id}.mappings"))
            for h in behind.get(m.to, []):
                yield from _initiators_of(ctx, a, h, mapping, by_wwpn)
    return array_items(ctx, 8000, per)


def _initiators_of(ctx: BedContext, a: StorageArray, h: Any, base: Values, by_wwpn: dict[str, str]
                   ) -> Iterator[tuple[Values, str]]:
    """An item's values for each initiator of the array host `h`, on top of `base`."""
    src = f"{a.id}:host:{h.name}"
    if h.initiators is NOT_STATED:
        # the access record still has to be made: its step names the host and leaves the initiator to be read
        # from the machine (its IQN or WWPN), done by hand
        vals = dict(base)
        put_fields(vals, "array_host", h, src, _ARRAY_HOST_PLAIN)
        put(vals, "initiator.name", not_stated(f"{src}.initiators"))
        put(vals, "initiator.index", as_number(1))
        kind = {"iscsi": "iscsi", "fc": "fc"}.get(a.connectivity if isinstance(a.connectivity, str) else "")
        if kind:
            put(vals, "initiator.kind", as_token(kind))
            put(vals, "initiator.iqn" if kind == "iscsi" else "initiator.wwpn_hex", not_stated(f"{src}.initiators"))
        put(vals, "initiator.label", as_text(f"{h.name}-1", src))
        yield vals, a.id
        return
    for k, text in enumerate(h.initiators):
        vals = dict(base)
        put_fields(vals, "array_host", h, src, _ARRAY_HOST_PLAIN)
        vals.update(_initiator_values(ctx, h, text, k, f"{src}.initiators", by_wwpn))
        yield vals, a.id
