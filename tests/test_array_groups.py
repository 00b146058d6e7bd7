"""Array groups that hold the storage (EqualLogic): pools span members, volumes belong to the
group (GROUP:VOLUME), the access records are the group's, and a volume's sessions end on the
ports of its pool's members.  The bed in tests/data/array_groups has three members: pool `data`
spans m1 and m2, pool `logs` m3; each member has three active 1 GbE ports on CM0 and three
standby ports on CM1; the host has three 1 GbE iSCSI ports."""
from __future__ import annotations

from pathlib import Path

import pytest

from topology.capacity import pool_usable
from topology.configurations import configured
from topology.errors import BedFileError
from topology.fileformat import load, loads
from topology.index import BedIndex
from topology.validation import validate
from topology.validation.context import Context

BED = Path(__file__).resolve().parent / "data" / "array_groups" / "three-member-group.yaml"


@pytest.fixture(scope="module")
def bed():
    return load(BED)


def _targets(ctx: Context, volume: str) -> set[str]:
    return {p.target.partition(":")[0] for p, _ in ctx.working_paths("R710", volume)}


def test_a_group_volume_is_reached_on_the_ports_of_its_pools_members_only(bed):
    ctx = Context(bed)
    # three host ports x six ports of m3 (three active, three standby); the data pool's two members: 36
    assert _targets(ctx, "eqlgrp:log1") == {"m3"} and len(ctx.working_paths("R710", "eqlgrp:log1")) == 18
    assert _targets(ctx, "eqlgrp:vol1") == {"m1", "m2"} and len(ctx.working_paths("R710", "eqlgrp:vol1")) == 36
    # every session is discovered at the group address first
    hops = next(iter(ctx.derived.paths)).hops
    assert any(h.kind == "portal" and "10.10.5.1/24" in h.text for h in hops)


def test_members_of_a_group_that_holds_the_volumes_are_not_unfinished_arrays(bed):
    found = validate(bed)
    assert not [f for f in found if f.code in ("CON-002", "PATH-001", "PATH-004", "NET-002")]
    # the bandwidth is weighed over the group's members that serve the host, not member by member
    (ratio,) = [f for f in found if f.code == "PATH-005"]
    assert ratio.message == "eqlgrp offers R710 9 Gb/s on 9 active port(s) for 3 Gb/s on 3 host SAN port(s): ratio 3:1"


def test_a_group_pool_holds_what_its_members_raid_sets_hold(bed):
    idx = BedIndex(bed)
    # raid10 over 14 x 450 GB per member: 3,150 GB; data spans two members, logs one
    assert pool_usable(idx.scopes["eqlgrp"], "data") == 6300 and pool_usable(idx.scopes["eqlgrp"], "logs") == 3150
    text = BED.read_text().replace("{name: vol1, size_gb: 2000", "{name: vol1, size_gb: 7000")
    (full,) = [f for f in validate(loads(text)) if f.code == "RAID-007"]
    assert "need 7000 GB; it has 6300 GB usable" in full.message and "eqlgrp" in full.subjects


def test_a_configuration_changes_the_groups_access_records_and_volumes(bed):
    text = BED.read_text() + """configurations:
  - id: as-drawn
  - id: logs-only
    set:
      eqlgrp:
        mappings:
          - {volume: log1, to: R710}
      eqlgrp:log1: {size_gb: 600}
"""
    study = loads(text)
    view = configured(study, "logs-only")
    group = view.array_groups[0]
    assert [m.volume for m in group.mappings] == ["log1"] and group.volumes[1].size_gb == 600
    assert study.array_groups[0].volumes[1].size_gb == 500       # the bed as drawn is untouched
    ctx = Context(view)
    assert ctx.working_paths("R710", "eqlgrp:vol1") == [] and len(ctx.working_paths("R710", "eqlgrp:log1")) == 18


def test_group_names_and_pool_members_are_checked_on_load():
    text = BED.read_text()
    clash = text.replace("  - name: eqlgrp\n", "  - name: R710\n").replace("group: eqlgrp", "group: R710")
    with pytest.raises(BedFileError) as caught:
        loads(clash, "g.yaml")
    assert any("array group 'R710' has the name of a server" in p.message for p in caught.value.problems)
    stranger = text.replace("members: [m3]", "members: [m3, m9]")
    with pytest.raises(BedFileError) as caught:
        loads(stranger, "g.yaml")
    assert any("'m9' does not name" in p.message for p in caught.value.problems)
    outside = text.replace("  - id: m3\n    model: Dell EqualLogic PS5000XV\n    group: eqlgrp",
                           "  - id: m3\n    model: Dell EqualLogic PS5000XV\n    group: other")
    with pytest.raises(BedFileError) as caught:
        loads(outside, "g.yaml")
    (problem,) = caught.value.problems
    assert problem.message == "'m3' is not a member of group 'eqlgrp'" and problem.line
    mapped = text.replace("{volume: log1, to: R710}", "{volume: log2, to: R710}")
    with pytest.raises(BedFileError) as caught:
        loads(mapped, "g.yaml")
    assert any("'log2' does not name a volume in this array" in p.message for p in caught.value.problems)
