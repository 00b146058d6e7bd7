"""The validator's fast paths give the findings of the straightforward code they replaced
(tests/reference_validation.py), on the examples, the rule tests' bed and synthetic beds with
random damage: cables pulled, MTUs, flow control and uplinks changed, controllers on standby,
disk sets of other sizes and speeds inside the disk groups."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tests import reference_validation as reference
from tests.beds import clean_bed
from topology.derived_paths import PathDerivation
from topology.fileformat import load
from topology.graph import PathAnalyzer
from topology.model import DiskSet, Link, PathSpec, Switch
from topology.synthetic import generate
from topology.unknown import NOT_STATED
from topology.validation import port_facts, validate
from topology.validation import vm_facts as vm_facts_module
from topology.validation.context import Context
from topology.validation.registry import RULES
from topology.validation.vm_facts import VmFacts

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "resources" / "examples").glob("*.yaml"))


def damaged_bed(seed: int):
    """A synthetic bed (scenarios included) with random things changed, so every branch of the
    path and MTU rules has something to say."""
    rng = random.Random(seed)
    bed = generate(hosts=24, vms=60, arrays=3, disks=60, rack_size=8, pins=seed % 2 == 0, scenarios=True)
    bed.links = [lk for lk in bed.links if rng.random() > 0.12]
    mtus = [None, 1500, 9000, 9216, NOT_STATED]
    ports = [p for s in bed.servers for ad in s.adapters for p in ad.ports]
    ports += [p for a in bed.arrays for c in a.controllers for p in c.ports]
    ports += [p for sw in bed.switches for p in sw.ports]
    if seed % 3 == 2:       # standard frames everywhere, but for what is changed below
        for net in bed.networks:
            net.mtu = 1500
        for sw in bed.switches:
            sw.mtu = 1500
        for p in ports:
            p.mtu = None
    for p in ports:
        if rng.random() < (0.05 if seed % 3 == 2 else 0.2):
            p.mtu = rng.choice(mtus)
        if rng.random() < 0.1:
            p.flow_control = rng.choice([None, False, True, NOT_STATED])
    for sw in bed.switches:
        if rng.random() < 0.3:
            sw.mtu = rng.choice(mtus)
    for vs in bed.virtual_switches:
        if vs.uplinks and rng.random() < 0.2:
            vs.uplinks = vs.uplinks[:1] if rng.random() < 0.5 else []
    for vm in bed.vms:
        for n in vm.nics:
            if rng.random() < 0.1:
                n.role = "iscsi"
                n.mtu = rng.choice(mtus)
    for a in bed.arrays:
        if a.controllers and rng.random() < 0.3:
            a.controllers[-1].mode = "standby"
        for e in a.enclosures:      # disk sets of other sizes, speeds or not stated, inside the groups
            first = rng.randint(0, 7)
            e.disks += [DiskSet(slots=f"{first}-{first + rng.randint(0, 3)}", media="hdd", interface="sas",
                                size_gb=rng.choice([600, 1200, NOT_STATED]), rpm=rng.choice([10000, 15000]))]
            e.disks[0].slots = f"{first + 4}-{e.slots - 1}"
    return bed


def _beds():
    yield from ((f.stem, load(f)) for f in EXAMPLES)
    yield "clean", clean_bed()
    for seed in range(6):
        yield f"damaged-{seed}", damaged_bed(seed)


def _said(findings) -> list[tuple]:
    """What a user reads of each finding: its fact, where it holds, and every case it groups."""
    return sorted((f.code, f.severity, tuple(f.subjects), f.message, f.scenario or "", f.accepted, f.holds_in,
                   tuple((c.subjects, c.message, c.where) for c in f.cases()),
                   tuple((c.code, c.message, c.subjects) for c in f.consequences)) for f in findings)


@pytest.mark.parametrize("name,bed", list(_beds()), ids=lambda v: v if isinstance(v, str) else "")
def test_fast_validation_says_what_the_straightforward_code_says(name, bed, monkeypatch):
    fast = _said(validate(bed))
    ctx = Context(bed)
    routes = ctx.routes     # PathAnalyzer.routes: route's loop, inlined
    plain = PathAnalyzer(ctx.idx)
    assert [(p.initiator, p.target, r) for p, r in routes] == \
        [(p.initiator, p.target, reference.route(plain, p)) for p in ctx.paths]
    assert [port_facts.path_mtus(ctx, p, r) for p, r in routes] == \
        [reference.path_mtus(ctx, p, r) for p, r in routes]
    # NET-005 reads an initiator's MTUs straight from its port first: what the hops say, without where
    assert [port_facts.initiator_mtu_values(ctx, p.initiator) for p in ctx.paths] == \
        [tuple((m, e) for _, m, e in port_facts.initiator_mtus(ctx, p.initiator) or ()) for p in ctx.paths]
    derived = [(sp.spec, sp.hops, sp.pinned, sp.luns) for sp in ctx.derived.paths]
    monkeypatch.setattr(PathAnalyzer, "route", reference.route)
    monkeypatch.setattr(PathAnalyzer, "routes", lambda self, paths: [(p, self.route(p)) for p in paths])
    monkeypatch.setitem(RULES, "NET-005", (RULES["NET-005"][0], reference.net_005))
    monkeypatch.setitem(RULES, "RAID-002", (RULES["RAID-002"][0], reference.raid_002))
    monkeypatch.setattr(PathDerivation, "_derive_host_array", reference.derive_host_array)
    assert derived == [(sp.spec, sp.hops, sp.pinned, sp.luns) for sp in Context(bed).derived.paths], name
    assert fast == _said(validate(bed)), name


def test_the_damaged_beds_reach_the_branches_the_fast_code_has():
    """Routes of every status, unknown and mixed MTUs: the comparison above covers them."""
    statuses: set[str] = set()
    codes: set[str] = set()
    findings: list = []
    for seed in range(6):
        bed = damaged_bed(seed)
        ctx = Context(bed)
        statuses |= {ctx.analyzer.route(p).status for p in ctx.paths}
        found = validate(bed)
        findings += [f for f in found if f.code == "NET-005"]
        codes |= {f.code for f in found}
    assert {"ok"} <= statuses
    assert {"NET-005", "PATH-002", "RAID-002"} <= codes
    assert {"MTU differs", "the MTU along", "1500-byte frames"} <= {
        key for f in findings for c in f.cases() for key in ("MTU differs", "the MTU along", "1500-byte frames")
        if key in c.message}


@pytest.mark.parametrize("seed", range(4))
def test_routes_of_every_initiator_to_every_array_port_are_the_straightforward_ones(seed):
    """Routes are worked out once per target and kind of initiator (its switches, a direct cable,
    its fabric): every pair of ports, fabrics set at random, gets the route the plain code gives."""
    rng = random.Random(seed)
    bed = damaged_bed(seed)
    for p in [p for s in bed.servers for ad in s.adapters for p in ad.ports] + \
            [p for a in bed.arrays for c in a.controllers for p in c.ports]:
        if rng.random() < 0.3:
            p.fabric = rng.choice(["A", "B", ""])
    if seed % 2:        # a few initiators cabled straight to an array port
        servers, arrays = bed.servers[:3], [a for a in bed.arrays if a.controllers and a.controllers[0].ports]
        for s, a in zip(servers, arrays, strict=False):
            bed.links.append(Link(a=f"{s.id}:{s.adapters[0].ports[-1].name}",
                                  b=f"{a.id}:{a.controllers[0].ports[0].name}"))
    ctx = Context(bed)
    plain = PathAnalyzer(ctx.idx)
    initiators = [(s.id, ref) for s in bed.servers for ref, _ in ctx.idx.server_ports(s)]
    initiators += [(vm.id, f"{vm.id}:{n.name}") for vm in bed.vms for n in vm.nics]
    targets = [ref for a in bed.arrays for ref, _, _ in ctx.idx.array_ports(a)] + ["nowhere:p0"]
    statuses = set()
    for host, ini in initiators:
        for tgt in targets:
            spec = PathSpec(host=host, initiator=ini, target=tgt)
            fast = ctx.analyzer.route(spec)
            assert fast == reference.route(plain, spec), (ini, tgt)
            statuses.add(fast.status)
    assert {"ok", "invalid"} <= statuses


def _all_vms_facts(ctx):
    """vm_facts with nothing picked out: every VM and every vNIC handed to the rules, which judge each."""
    nics = [(vm, n) for vm in ctx.bed.vms for n in vm.nics]
    return VmFacts(list(ctx.bed.vms), list(ctx.bed.vms), nics,
                   [(f"{vm.id}:{n.name}", n.address, n.network) for vm, n in nics if n.address], nics)


def _broken_beds():
    """The rule table's bed broken once for each rule (ports cabled twice, VMs with no memory, ...)."""
    from test_rules import BREAKS
    for code, breaks in sorted(BREAKS.items()):
        bed = clean_bed()
        breaks(bed)
        yield f"broken-{code}", bed


@pytest.mark.parametrize("name,bed", [*_beds(), *_broken_beds()], ids=lambda v: v if isinstance(v, str) else "")
def test_the_shared_walks_hand_the_rules_what_a_walk_of_their_own_finds(name, bed, monkeypatch):
    """The server ports, cable ends and VMs the rules read from one walk each (validation.port_facts,
    validation.vm_facts) are what each rule's own walk found: a VM left out by vm_facts would have
    given no finding, and the per-port lists and cable counts are the straightforward ones."""
    ctx = Context(bed)
    rows = [(s, ref, p) for s in bed.servers for ref, p in ctx.idx.server_ports(s)]
    facts = port_facts.server_port_facts(ctx)
    assert facts.san == [r for r in rows if "iscsi" in r[2].roles]
    assert facts.roles_unstated == [r for r in rows if r[2].roles is NOT_STATED]
    assert [(s, san, unknown) for s, san, unknown in facts.by_server] == [
        (s, [(ref, p) for ref, p in ctx.idx.server_ports(s) if "iscsi" in p.roles],
         [ref for ref, p in ctx.idx.server_ports(s) if p.roles is NOT_STATED]) for s in bed.servers]
    ends = [end for pair in ctx.analyzer.link_ends for end in pair]
    cables = port_facts.cable_facts(ctx)
    assert cables.uses == dict(Counter(ref for ref, pr, _ in ends if pr is not None))
    assert cables.links_on == dict(Counter(dev.id for _, _, dev in ends if isinstance(dev, Switch)))
    # a cable whose far end the source does not state ends on its stated port only (the marker is no end)
    assert sorted(ctx.analyzer.cable_ends) == sorted({end for lk in bed.links for end in (lk.a, lk.b)
                                                      if end is not NOT_STATED})
    assert ctx.placement.loads_as_drawn() == ctx.placement.loads(ctx.placement.of(None))
    fast = _said(validate(bed))
    monkeypatch.setattr(vm_facts_module, "_facts_now", _all_vms_facts)
    assert fast == _said(validate(bed)), name
