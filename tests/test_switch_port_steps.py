"""The procedure configures the switch ports the bed uses and leaves the others alone (issue 32: a
palette switch describes 24 ports; a two-host bed listed "configure port N" for the 19 no cable
plugs into).  A port a cable of the bed plugs into gets its step; one no cable reaches does not;
where a cable reaches the switch without naming a port, or its far end is not stated, the bed
cannot say which ports are free, so the ports it describes keep their steps."""
from __future__ import annotations

import re

import pytest

from topology import operations as ops
from topology.methodology import generate
from topology.model import Bed, BedInfo
from topology.unknown import NOT_STATED


@pytest.fixture
def bed() -> Bed:
    b = Bed(bed=BedInfo(name="two hosts"))
    for kind in ("server:hypervisor", "server:hypervisor", "switch:ethernet", "switch:ethernet", "array"):
        ops.add_device(b, kind, x=0, y=0).apply()
    return b


def configured_ports(bed: Bed, switch: str) -> list[str]:
    texts = [" ".join(str(s.text).split()) for s in generate(bed).steps()]
    return [m.group(1) for t in texts for m in [re.match(rf"On {switch}, configure port (\S+?)[ .]", t)] if m]


def test_only_the_ports_a_cable_uses_are_configured(bed):
    for a, b in (("host-1:SAN1", "sw-1"), ("host-2:SAN1", "sw-1"), ("array-1:A0", "sw-1"),
                 ("host-1:SAN2", "sw-2"), ("host-2:SAN2", "sw-2")):
        ops.connect(bed, a, b).apply()
    cabled = {lk.b.partition(":")[2] for lk in bed.links if lk.b.startswith("sw-1:")}
    assert len(cabled) == 3 and len(next(s for s in bed.switches if s.id == "sw-1").ports) == 24
    assert sorted(configured_ports(bed, "sw-1")) == sorted(cabled)
    assert len(configured_ports(bed, "sw-2")) == 2


def test_a_port_marked_unused_is_left_out_even_where_the_cabling_is_open(bed):
    ops.connect(bed, "host-1:SAN1", "sw-1").apply()
    bed.links[0].b = "sw-1"                       # the cable reaches the switch; its port is not named
    sw = next(s for s in bed.switches if s.id == "sw-1")
    sw.ports[5].roles = ["unused"]
    shown = configured_ports(bed, "sw-1")
    assert len(shown) == 23 and sw.ports[5].name not in shown


def test_a_cable_whose_far_end_is_not_stated_keeps_every_described_port(bed):
    ops.connect(bed, "host-1:SAN1", "sw-1").apply()
    bed.links[0].b = NOT_STATED                   # which switch, which port: the source does not say
    assert len(configured_ports(bed, "sw-1")) == 24
