"""The network section's domain: the ports of the physical servers.

`port_values` gives a port's values to every domain that names a port (switch and array ports too).
"""
from __future__ import annotations

import ipaddress
import re
from functools import cache
from typing import Any

from topology.ids import split_endpoint
from topology.methodology.context import BedContext
from topology.methodology.domains.hosts import HOST_NAMES, server_items
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Values,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    format_number,
    interface_of,
    network_of,
    not_stated,
    put,
    put_address,
)
from topology.model import Server
from topology.unknown import NOT_STATED
from topology.vocabulary import ROLE_PROSE

PORT_FIELDS = ("name", "ref", "label", "display", "roles", "role_text", "kind", "speed", "address", "network",
               "cidr", "ip", "prefix", "mask", "mtu", "mtu_text", "jumbo_packet", "frame_size",
               "flow_control", "flow_control_text",
               "flow_control_value", "flow_onoff", "vlan", "team", "wwpn", "fabric", "vswitch",
               # iSCSI port binding (an ESXi VMkernel port bound to one NIC): the NIC, its name and its switch
               "bound_to", "bound_name", "bound_vswitch",
               # the port's name as a switch CLI takes it: bare when it is a plain word ("Te 0/1", "1/g1")
               "cli_name",
               # the hardware address the bed states, as Linux writes it (aa:bb:cc:dd:ee:ff)
               "mac")
# roles whose ports carry a host address
_IP_ROLES = {"iscsi", "lan", "heartbeat", "live_migration", "management", "replication"}


def normal_mac(text: str) -> str:
    """'00-1B-21-3A-4F-10', '001b.213a.4f10' or '001B213A4F10' as '00:1b:21:3a:4f:10'; other text unchanged
    (the step's check then refuses every interface and says what the bed states)."""
    digits = re.sub(r"[:.\-]", "", text.strip()).lower()
    if re.fullmatch(r"[0-9a-f]{12}", digits):
        return ":".join(digits[k:k + 2] for k in range(0, 12, 2))
    return text.strip()


@cache
def _netmask(prefixlen: int) -> str:
    return str(ipaddress.IPv4Network(f"0.0.0.0/{prefixlen}").netmask)


def port_values(ctx: BedContext, owner_id: str, p: Any, prefix: str = "port", network_mtu: bool = True) -> Values:
    out: Values = {}
    ref = f"{owner_id}:{p.name}"
    put(out, f"{prefix}.name", as_text(p.name, f"{ref}.name"))
    put(out, f"{prefix}.cli_name", as_token(p.name, f"{ref}.name"))
    put(out, f"{prefix}.ref", as_text(ref, f"{ref}"))
    put(out, f"{prefix}.label", as_text(getattr(p, "label", ""), f"{ref}.label"))
    put(out, f"{prefix}.display", as_text(getattr(p, "label", "") or p.name,
                                          f"{ref}.label" if getattr(p, "label", "") else f"{ref}.name"))
    roles = list(getattr(p, "roles", []) or [])
    if not roles and getattr(p, "role", None):
        roles = [p.role]
    if NOT_STATED in (getattr(p, "roles", None), getattr(p, "role", None)):
        put(out, f"{prefix}.roles", not_stated(f"{ref}.roles"))
        put(out, f"{prefix}.role_text", not_stated(f"{ref}.roles"))
    put(out, f"{prefix}.roles", as_list(roles, f"{ref}.roles"))
    put(out, f"{prefix}.role_text", as_text(", ".join(ROLE_PROSE.get(r, r) for r in roles), f"{ref}.roles"))
    put(out, f"{prefix}.kind", as_token(getattr(p, "kind", ""), f"{ref}.kind"))
    speed = getattr(p, "speed_gbps", None)
    if speed is NOT_STATED:
        put(out, f"{prefix}.speed", not_stated(f"{ref}.speed_gbps"))
    elif speed:
        put(out, f"{prefix}.speed", as_text(f"{format_number(speed)} Gb/s", f"{ref}.speed_gbps"))
    mac = getattr(p, "mac", "")
    if mac and mac is not NOT_STATED:
        # as Linux shows it (/sys/class/net/NAME/address): the step that configures the port checks it is that NIC
        put(out, f"{prefix}.mac", as_token(normal_mac(str(mac)), f"{ref}.mac"))
    addr = getattr(p, "address", "") or ""
    put(out, f"{prefix}.address", as_text(addr, f"{ref}.address"))
    if getattr(p, "address", "") is NOT_STATED:
        put_address(out, prefix, NOT_STATED, f"{ref}.address")
        put(out, f"{prefix}.address", not_stated(f"{ref}.address"))
    net = ctx.idx.networks.get(getattr(p, "network", "") or "")
    if net is not None:
        put(out, f"{prefix}.network", as_text(net.id, f"{ref}.network"))
        put(out, f"{prefix}.cidr", as_text(net.cidr, f"{net.id}.cidr"))
    i = interface_of(addr)
    if i is not None:
        put(out, f"{prefix}.ip", as_token(str(i.ip), f"{ref}.address"))
        prefixlen: int | None = i.network.prefixlen
        src = f"{ref}.address"
        if "/" not in addr:
            if net is not None and (netobj := network_of(net.cidr)) is not None:
                prefixlen, src = netobj.prefixlen, f"{net.id}.cidr"
            else:
                prefixlen = None
        if prefixlen is not None:
            put(out, f"{prefix}.prefix", as_number(prefixlen, src))
            if i.version == 4:
                put(out, f"{prefix}.mask", as_token(_netmask(prefixlen), src))
    mtu = getattr(p, "mtu", None)
    mtu_src = f"{ref}.mtu"
    if mtu is None and network_mtu and net is not None and net.mtu:
        mtu, mtu_src = net.mtu, f"{net.id}.mtu"
    if mtu is NOT_STATED:
        for name in ("mtu", "mtu_text", "jumbo_packet"):
            put(out, f"{prefix}.{name}", not_stated(mtu_src))
    elif mtu:
        put(out, f"{prefix}.mtu", as_number(mtu, mtu_src))
        put(out, f"{prefix}.mtu_text", as_text(f"{mtu} (jumbo frames)" if mtu > 1500 else str(mtu), mtu_src))
        # Windows drivers take the frame size with the 14-byte Ethernet header (*JumboPacket 9014)
        put(out, f"{prefix}.jumbo_packet", as_number(mtu + 14 if mtu > 1500 else 1514, mtu_src))
        # a switch CLI that takes the Ethernet frame size (PowerConnect 62xx `mtu`: 1518-9216): the IP MTU plus
        # the 18 bytes of header and FCS, only for jumbo frames (1518 is the default)
        if 1500 < mtu <= 9216:     # a value above 9198 is already the switch's frame size (9216 is the most)
            put(out, f"{prefix}.frame_size", as_number(min(mtu + 18, 9216) if mtu <= 9198 else mtu, mtu_src))
    fc = getattr(p, "flow_control", None)
    if fc is NOT_STATED:
        for name in ("flow_control", "flow_control_text", "flow_control_value", "flow_onoff"):
            put(out, f"{prefix}.{name}", not_stated(f"{ref}.flow_control"))
    elif fc is not None:
        src = f"{ref}.flow_control"
        put(out, f"{prefix}.flow_control", as_bool(fc, src))
        put(out, f"{prefix}.flow_control_text",
            as_text("Generate & Respond (Rx and Tx)" if fc else "disabled", src))
        put(out, f"{prefix}.flow_control_value", as_number(3 if fc else 0, src))
        put(out, f"{prefix}.flow_onoff", as_token("on" if fc else "off", src))
    put(out, f"{prefix}.vlan", as_number(getattr(p, "vlan", None), f"{ref}.vlan"))
    put(out, f"{prefix}.team", as_text(getattr(p, "team", ""), f"{ref}.team"))
    put(out, f"{prefix}.wwpn", as_text(getattr(p, "wwpn", ""), f"{ref}.wwpn"))
    put(out, f"{prefix}.fabric", as_text(getattr(p, "fabric", ""), f"{ref}.fabric"))
    vs = ctx.vswitch_of_port.get(ref)
    if vs is not None:
        put(out, f"{prefix}.vswitch", as_text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
    bound = getattr(p, "bound_to", "")
    if bound:
        put(out, f"{prefix}.bound_to", as_text(bound, f"{ref}.bound_to"))
        put(out, f"{prefix}.bound_name", as_text(split_endpoint(bound)[1], f"{ref}.bound_to"))
        bvs = ctx.vswitch_of_port.get(bound)
        if bvs is not None:
            put(out, f"{prefix}.bound_vswitch",
                as_text(bvs.label or bvs.id, f"{bvs.id}.label" if bvs.label else f"{bvs.id}.id"))
    return out


@domain("port", HOST_NAMES | field_names("port", *PORT_FIELDS, "adapter", "adapter_model", "index", "dns", "dns_csv",
                                         "needs_ip"),
        "each port of each physical server")
def _ports(ctx: BedContext) -> list[Item]:
    def per(s: Server, base: Values):
        k = 0
        carriers = {p.bound_to for ad in s.adapters for p in ad.ports if p.bound_to}
        for ad in s.adapters:
            for p in ad.ports:
                k += 1
                if p.kind not in ("ethernet", "management", "infiniband") or "unused" in p.roles:
                    continue
                vals = dict(base)
                vals.update(port_values(ctx, s.id, p))
                put(vals, "port.adapter", as_text(ad.name, f"{s.id}.adapters"))
                put(vals, "port.adapter_model", as_text(ad.model, f"{s.id}.adapters"))
                put(vals, "port.index", as_number(k))
                # a virtual switch's uplink that the host OS does not share carries no host address
                vs = ctx.vswitch_of_port.get(f"{s.id}:{p.name}")
                uplink_only = vs is not None and not vs.management_os
                # the NIC iSCSI interfaces are bound to (open-iscsi ifaces): the interfaces carry the addresses
                uplink_only = uplink_only or f"{s.id}:{p.name}" in carriers and not p.address \
                    and p.address is not NOT_STATED
                put(vals, "port.needs_ip", as_bool(bool(p.address) or (bool(set(p.roles) & _IP_ROLES)
                                                                     and not uplink_only)))
                if set(p.roles) & {"lan", "management"} and s.dns:
                    put(vals, "port.dns", as_list(s.dns, f"{s.id}.dns"))
                    put(vals, "port.dns_csv", as_text(",".join(s.dns), f"{s.id}.dns"))
                yield vals, k
    return server_items(ctx, per)
