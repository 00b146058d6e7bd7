"""Array groups: arrays that answer as one iSCSI target behind one discovery address.

An EqualLogic group is the model: an initiator discovers the group's IP address (iSCSI
SendTargets), and the group redirects each session to an Ethernet port of the member that
holds the volume.  So a host needs two things at layer 3: the group address for discovery,
and the member port for the session.  A single array with a dedicated discovery portal is a
group of one.  The members name their group in `StorageArray.group`.
"""
from __future__ import annotations

from dataclasses import dataclass

from topology.fields import fld


@dataclass(slots=True, kw_only=True)
class ArrayGroup:
    """Arrays (members) that initiators discover through one group address."""
    name: str = fld(doc="the name the members give in their `group` field")
    address: str = fld("", doc="group (discovery) IP address with prefix, e.g. 10.10.5.10/24; sessions are "
                               "redirected to member ports")
    network: str = fld("", ref="network")
    vlan: int | None = fld(None, minimum=0, maximum=4095)
    note: str = fld("")
