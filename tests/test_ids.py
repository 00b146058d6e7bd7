"""Subject ids: one grammar, formatted and parsed by topology.ids, and one find-by-id."""
from __future__ import annotations

from topology import ids
from topology.model import Bed, BedInfo, Network, Server


def test_formatting_and_parsing_agree():
    assert ids.port_ref("R710-1", "SAN1") == "R710-1:SAN1"
    assert ids.split_owner("R710-1:SAN1") == ("R710-1", "SAN1")
    assert ids.split_owner("R710-1") == ("R710-1", "")
    assert ids.owner_of(ids.group_ref("MD3000i", "SQL")) == "MD3000i"
    assert ids.parse_array_part("group:SQL") == ids.ArrayPart("group", "SQL")
    assert ids.parse_array_part("pool:Pool 0") == ids.ArrayPart("pool", "Pool 0")
    slot = ids.slot_ref("MD3000i", "E0", 3)
    assert ids.parse_array_part(ids.split_owner(slot)[1]).slot == ("E0", 3)
    assert ids.parse_array_part("Logs") == ids.ArrayPart("", "Logs")
    # a link end names its device before the last colon; a bare switch has none
    assert ids.split_endpoint("sw1") == ("", "sw1")
    assert ids.endpoint_device("sw1") == "sw1" and ids.endpoint_device("R710-1:SAN1") == "R710-1"
    assert ids.leaf_name(ids.volume_ref("MD3000i", "Logs")) == "Logs"


def test_find_by_id_looks_in_every_collection_or_only_the_given_ones():
    bed = Bed(bed=BedInfo(name="t"), servers=[Server(id="h1")], networks=[Network(id="lan")])
    assert ids.find_component(bed, "lan")[0] == "network"
    assert ids.find(bed, "h1") is bed.servers[0]
    assert ids.find(bed, "lan", ("servers",)) is None
    assert ids.find(bed, "nothing") is None
    assert ids.taken_ids(bed) == {"h1", "lan"}
