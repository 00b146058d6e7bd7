"""The switches section's domains: switches, their settings and ports, and the links between devices."""
from __future__ import annotations

from typing import Any

from topology.ids import SEP
from topology.methodology.context import BedContext
from topology.methodology.domains.network import PORT_FIELDS, port_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    ValueKind,
    Values,
    as_any,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    plain,
    put,
    put_fields,
    setting_entries,
)
from topology.unknown import NOT_STATED
from topology.vocabulary import ROLE_PROSE

_SWITCH_FIELDS: dict[str, ValueKind] = {
    "id": as_text, "model": as_text, "firmware": as_text, "kind": as_token, "mtu": as_number, "flow_control": as_bool,
    "spanning_tree": as_text, "vlans": as_list, "roles": as_list, "fabric": as_text, "port_count": as_number,
    "label": as_text}
SWITCH_NAMES = field_names("switch", *_SWITCH_FIELDS, "flow_control_text", "role_text", "display", "family",
                           "family_name", "jumbo", "frame_size")


def _switch_values(ctx: BedContext, sw: Any) -> Values:
    out: Values = {}
    r = sw.id
    put_fields(out, "switch", sw, r, _SWITCH_FIELDS)
    mtu = sw.mtu if isinstance(sw.mtu, int) and not isinstance(sw.mtu, bool) else None
    if mtu is not None:
        # jumbo frames only above the standard 1500-byte MTU; a CLI that takes frame sizes gets MTU + 18
        put(out, "switch.jumbo", as_bool(mtu > 1500, f"{r}.mtu"))
        if 1500 < mtu <= 9216:     # a value above 9198 is already the switch's frame size (9216 is the most)
            put(out, "switch.frame_size", as_number(mtu + 18 if mtu <= 9198 else mtu, f"{r}.mtu"))
    family = ctx.families.of("switch", sw.model)
    if family is not None:
        put(out, "switch.family", as_token(family.id, f"{r}.model"))
        put(out, "switch.family_name", as_text(family.name, f"{r}.model"))
    if sw.flow_control is not None:
        put(out, "switch.flow_control_text", as_text("enabled" if sw.flow_control else "disabled", f"{r}.flow_control"))
    put(out, "switch.role_text", as_text(", ".join(ROLE_PROSE.get(x, x) for x in sw.roles), f"{r}.roles"))
    put(out, "switch.display", as_text(f"{sw.id} ({sw.model})" if sw.model else sw.id, f"{r}.model"))
    for k, v in sw.settings.items():
        put(out, f"switch.settings.{k}", as_any(v, f"{r}.settings.{k}"))
    return out


@domain("switch", SWITCH_NAMES, "each switch")
def _switches(ctx: BedContext) -> list[Item]:
    return [Item(_switch_values(ctx, sw), sw.id, "switch", (i,), 0)
            for i, sw in enumerate(ctx.bed.switches) if not sw.simulated]


@domain("switch_setting", SWITCH_NAMES | field_names("setting", "name", "label", "value", "value_text"),
        "each entry of each switch's settings")
def _switch_settings(ctx: BedContext) -> list[Item]:
    out = []
    for i, sw in enumerate(ctx.bed.switches):
        base = _switch_values(ctx, sw)
        for j, vals, src, v in setting_entries(base, "setting", sw.settings, f"{sw.id}.settings"):
            put(vals, "setting.value_text", as_text(plain(v), src))
            out.append(Item(vals, sw.id, "switch", (i,), 100 + j))
    return out


def cabled_switch_ports(bed: Any) -> tuple[set[str], set[str]]:
    """The DEVICE:PORT ends the bed's cables plug into, and the switches some cable reaches on a port
    the bed does not name (a cable to the switch's body) -- where any cable's far end is not stated,
    every switch is in the second set: that cable may land on any of their ports."""
    ends: set[str] = set()
    unnamed: set[str] = set()
    loose = False
    switches = {sw.id for sw in bed.switches}
    for link in bed.links:
        for end in (link.a, link.b):
            if end is NOT_STATED or not end:
                loose = True
                continue
            device, _sep, _port = end.rpartition(SEP)
            if not device:
                if end in switches:
                    unnamed.add(end)
            else:
                ends.add(end)
    return ends, (switches if loose else unnamed)


def port_in_use(sw: Any, port: Any, ends: set[str], unnamed: set[str]) -> bool:
    """A switch port the procedure configures: one a cable of the bed plugs into, or one on a switch
    some cable reaches without naming its port (it may be this one); never one marked unused."""
    if "unused" in (port.roles or ()):
        return False
    return f"{sw.id}:{port.name}" in ends or sw.id in unnamed


@domain("switch_port", SWITCH_NAMES | field_names("port", *PORT_FIELDS, "edge"),
        "each port of a switch that a cable of the bed uses (a port no cable plugs into is left as it is)")
def _switch_ports(ctx: BedContext) -> list[Item]:
    out = []
    ends, unnamed = cabled_switch_ports(ctx.bed)
    for i, sw in enumerate(ctx.bed.switches):
        base = _switch_values(ctx, sw)
        for j, p in enumerate(sw.ports):
            if not port_in_use(sw, p, ends, unnamed):
                continue
            vals = dict(base)
            vals.update(port_values(ctx, sw.id, p, network_mtu=False))
            put(vals, "port.edge", as_bool(p.edge, f"{sw.id}:{p.name}.edge"))
            out.append(Item(vals, sw.id, "switch", (i,), 200 + j))
    return out


_LINK_FIELDS: dict[str, ValueKind] = {
    "a": as_text, "b": as_text, "kind": as_token}


@domain("link", field_names("link", *_LINK_FIELDS, "a_label", "b_label", "note", "switch"),
        "each cable / ISL / LAG, under the switch it plugs into")
def _links(ctx: BedContext) -> list[Item]:
    out = []
    sw_rank = {sw.id: i for i, sw in enumerate(ctx.bed.switches)}
    for j, ln in enumerate(ctx.bed.links):
        vals: Values = {}
        src = f"links[{j}]"
        put_fields(vals, "link", ln, src, _LINK_FIELDS)
        for end, key in ((ln.a, "a_label"), (ln.b, "b_label")):
            pr = ctx.idx.ports.get(end)
            if pr is not None and getattr(pr.port, "label", None):
                put(vals, f"link.{key}", as_text(pr.port.label, f"{end}.label"))
        sw = next((d for d in (ln.b.rpartition(":")[0] or ln.b, ln.a.rpartition(":")[0] or ln.a) if d in sw_rank), "")
        put(vals, "link.switch", as_text(sw, f"{src}"))
        group = (sw_rank[sw],) if sw else (len(sw_rank),)
        out.append(Item(vals, sw, "switch" if sw else "", group, 300 + j))
    return out


# the `zone` domain (each FC zone a switch declares) is in domains/vendor.py, beside the other items vendor
# CLIs need one at a time
