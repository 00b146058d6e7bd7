"""Array groups: arrays that answer as one iSCSI target behind one discovery address.

An EqualLogic group is the model: an initiator discovers the group's IP address (iSCSI
SendTargets), and the group redirects each session to an Ethernet port of the member that
holds the volume.  So a host needs two things at layer 3: the group address for discovery,
and the member port for the session.  A single array with a dedicated discovery portal is a
group of one.  The members name their group in `StorageArray.group`.

A group may hold the storage itself, as an EqualLogic group does: pools that span members
(`Pool.members`), the group's volumes (named `GROUP:VOLUME`), and the access records (hosts
and mappings) that say which initiators reach each volume.  The index then treats the group as
a storage scope of its own (`topology.index.BedIndex.group_views`): a volume of the group is
presented on the ports of its pool's members, so the paths, their counts and the bandwidth
are worked out over those members.

The field hints are read in `topology.model`'s namespace (see `topology.field_plan`), which
imports this class; the storage classes are imported here as well so that `typing.get_type_hints`
reads them in this module's.
"""
from __future__ import annotations

from dataclasses import dataclass

from topology.fields import fld, lst

# at run time too: typing.get_type_hints(ArrayGroup) resolves its fields in this module's namespace
from topology.model_storage import ArrayHost, HostGroup, Mapping, Pool, Volume


@dataclass(slots=True, kw_only=True)
class ArrayGroup:
    """Arrays (members) that initiators discover through one group address."""
    name: str = fld(doc="the name the members give in their `group` field; the group's volumes are GROUP:VOLUME")
    address: str = fld("", doc="group (discovery) IP address with prefix, e.g. 10.10.5.10/24; sessions are "
                               "redirected to member ports")
    network: str = fld("", ref="network")
    vlan: int | None = fld(None, minimum=0, maximum=4095)
    model: str = fld("", doc="e.g. Dell EqualLogic PS Series group")
    firmware: str = fld("")
    pools: list[Pool] = lst("pools of the group, each spanning the members it lists")
    volumes: list[Volume] = lst("volumes of the group (each in one of its pools)")
    host_groups: list[HostGroup] = lst()
    hosts: list[ArrayHost] = lst("initiators the group's access records name")
    mappings: list[Mapping] = lst("access records: which volume each host reaches")
    note: str = fld("")

    @property
    def id(self) -> str:
        """The id the group is selected and edited by (its card, its form): its name."""
        return self.name

    @property
    def holds_storage(self) -> bool:
        return bool(self.pools or self.volumes or self.hosts or self.mappings)
