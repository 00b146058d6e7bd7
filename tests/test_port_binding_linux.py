"""A Linux host whose iSCSI sessions leave through open-iscsi interfaces bound to one NIC (issue 12's
"several initiators bound on one NIC"): the procedure configures the NIC, not the interfaces, as network
devices.  It used to rename and address "iface0" with nmcli as if it were a NIC, give the NIC an
address «missing», and bind the open-iscsi interface to "iface0" (iface.net_ifacename), which
does not exist."""
from __future__ import annotations

from test_derived_paths import new_user_bed

from tests.script_checks import problems
from topology.methodology import generate
from topology.model import Link, Port


def _bound_bed():
    bed = new_user_bed()
    host = bed.servers[0]
    host.os, host.platform = "Red Hat Enterprise Linux 7.9", "linux"
    host.adapters[0].ports[:] = [Port(name="ens1f0", roles=["iscsi"], mtu=9000, flow_control=True)] + [
        Port(name=f"iface{i}", roles=["iscsi"], address=f"10.1.0.{21 + i}/24", mtu=9000, bound_to="host-1:ens1f0")
        for i in (0, 1)]
    bed.links = [lk for lk in bed.links if not lk.a.startswith("host-1:")] + [Link(a="host-1:ens1f0", b="switch-1")]
    return bed


def test_the_nic_is_configured_and_the_bound_interfaces_ride_it():
    bed = _bound_bed()
    meth = generate(bed)
    steps = [s for s in meth.steps() if s.target == "host-1"]
    rename = next(s for s in steps if "rename them" in s.text)
    assert rename.text.endswith("them: ens1f0. The later steps and commands use these names.")
    nic = next(s for s in steps if "interface ens1f0" in s.text)
    assert "has no IP address" in nic.text and not nic.unresolved
    assert [c.script.splitlines() for c in nic.automation] == [["ip link set dev ens1f0 mtu 9000",
                                                                "ethtool -A ens1f0 rx on tx on"]]
    bound = [s for s in steps if "is an iSCSI interface bound to ens1f0" in s.text]
    assert [s.text.split(":")[0] for s in bound] == ["On host-1, iface0 is an iSCSI interface bound to ens1f0, not a "
                                                     "network device", "On host-1, iface1 is an iSCSI interface "
                                                     "bound to ens1f0, not a network device"]
    assert all(not s.automation and not s.unresolved and "10.1.0.2" in s.text for s in bound)
    assert not [s for s in steps if "nmcli" in " ".join(c.script for c in s.automation) and "iface" in s.text]
    logins = [s for s in steps if "log in through it" in s.text]
    assert len(logins) == 4 and all("bind an iSCSI interface to ens1f0" in s.text for s in logins)
    assert all("-n iface.net_ifacename -v ens1f0" in s.automation[0].script for s in logins)
    assert problems(bed, meth) == []        # bash -n and shellcheck over every script of the bed
