"""Drafting a bed from a lab, for real: two sandbox sshd hosts in network namespaces, each with a SAN
interface (a veth given an address and an MTU) and a loop device standing for a LUN of one target
(known to each host by its udev record, with the WWN and serial a real target's VPD pages give),
attached through the session list the host's `iscsiadm` prints (laid out for the target: there is
no kernel initiator here).  `testbed-studio import BED --from-hosts INVENTORY` reads them with the
check's read-only probes: the dry run changes nothing; the import adds the hosts, their ports and
addresses, their access entries and the volume both see, as one change that one revert takes back;
the bed then checks as built (no finding that is not a note)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.sandbox_hosts import SandboxLab
from tests import asbuilt_lab as L
from topology.fileformat import dumps, load

pytestmark = pytest.mark.skipif(SandboxLab.netns_unavailable_reason() is not None,
                                reason=f"no namespace hosts here: {SandboxLab.netns_unavailable_reason()}")

WWN = "60014059a6a1b2c3d4e5f60718293a4b"
TARGET = "iqn.2026-01.org.testbed-studio:draft"
PORTAL = "10.20.0.50"
MIB = 1 << 20


def _sessions(host: str, device: str) -> str:
    return "\n".join([
        "iSCSI Transport Class version 2.0-870", "version 2.1.8",
        f"Target: {TARGET} (non-flash)", f"\tCurrent Portal: {PORTAL}:3260,1", f"\tPersistent Portal: {PORTAL}:3260,1",
        "\t\tIface Name: default", f"\t\tIface Initiatorname: iqn.1993-08.org.debian:01:{host}",
        f"\t\tIface IPaddress: {'10.20.0.11' if host == 'h1' else '10.20.0.12'}", "\t\tSID: 1",
        "\t\tiSCSI Session State: LOGGED_IN", "\t\tAttached SCSI devices:", "\t\tHost Number: 1\tState: running",
        "\t\tscsi1 Channel 00 Id 0 Lun: 1", f"\t\t\tAttached scsi disk {device}\t\tState: running"]) + "\n"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("draft")
    image = folder / "lun.img"
    with open(image, "wb") as f:
        f.truncate(64 * MIB)
    loop = L.loop_device(image)
    try:
        with SandboxLab(folder / "lab") as lab:
            for host, address, mtu in (("h1", "10.20.0.11/24", 9000), ("h2", "10.20.0.12/24", 1500)):
                lab.add_netns_host(host)
                L.add_san_port(lab, host, "san1", address, mtu=mtu)
                L.udev_entry(lab, host, loop, L.lun_props(WWN, "SN-draft"))
                L.iscsiadm_shim(lab, host, folder / f"{host}-bin", _sessions(host, loop.rsplit("/", 1)[1]))
            inventory = folder / "lab.ini"
            inventory.write_text("[load_clients]\n" + "".join(
                f"{h} ansible_host={lab.hosts[h].address} ansible_port={lab.hosts[h].port} ansible_user=root "
                f"ansible_ssh_private_key_file={lab.client_key_path}\n" for h in ("h1", "h2")))
            yield {"lab": lab, "inventory": inventory, "loop": loop}
    finally:
        subprocess.run(["losetup", "-d", loop], timeout=20)


def _cli(lab, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(lab.known_hosts_path)}
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=180,
                          env=env, stdin=subprocess.DEVNULL)


BED = "format_version: 1\nbed: {name: drafted}   # a comment the draft keeps\n"


def test_the_dry_run_lists_the_draft_and_changes_nothing(lab, tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text(BED)
    done = _cli(lab["lab"], "import", str(bed), "--from-hosts", str(lab["inventory"]), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert bed.read_text() == BED
    out = done.stdout
    assert "read 2 of 2 host(s)" in out
    assert "+ server h1 (load_client)" in out and "+ server h2 (load_client)" in out
    assert any(line.startswith("+ port h1:san1") and "10.20.0.11/24" in line and "MTU 9000" in line
               for line in out.splitlines()), out
    assert f"+ array array-10-20-0-50 (portals {PORTAL})" in out
    assert f"+ volume array-10-20-0-50:lun1  naa.{WWN}  0.067 GB  seen by h1 as LUN 1, h2 as LUN 1" in out
    assert "(dry run:" in out


@pytest.mark.slow
def test_the_draft_is_one_change_the_bed_keeps_and_then_checks_as_built(lab, tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text(BED)
    done = _cli(lab["lab"], "import", str(bed), "--from-hosts", str(lab["inventory"]))
    assert done.returncode == 0, done.stderr
    text = bed.read_text()
    assert "# a comment the draft keeps" in text
    drafted = load(str(bed))
    servers = {s.id: s for s in drafted.servers}
    assert set(servers) == {"h1", "h2"} and servers["h1"].role == "load_client"
    san = {(s.id, p.name): p for s in drafted.servers for ad in s.adapters for p in ad.ports}
    assert (san["h1", "san1"].address, san["h1", "san1"].mtu) == ("10.20.0.11/24", 9000)
    assert (san["h2", "san1"].address, san["h2", "san1"].mtu) == ("10.20.0.12/24", 1500)
    assert san["h1", "san1"].mac and servers["h1"].memory_gb and servers["h1"].os
    assert {a.host: (a.address, a.port) for a in drafted.access} == {
        h: (lab["lab"].hosts[h].address, lab["lab"].hosts[h].port) for h in ("h1", "h2")}
    (array,) = drafted.arrays
    (volume,) = array.volumes
    assert (volume.wwn, volume.serial, volume.target) == (f"naa.{WWN}", "SN-draft", TARGET)
    assert sorted((m.to, m.lun) for m in array.mappings) == [("h1", 1), ("h2", 1)]
    assert [p.address for c in array.controllers for p in c.ports] == [f"{PORTAL}/24"]
    # the drafted bed is the lab as built: the check finds nothing but notes
    check = _cli(lab["lab"], "check", str(bed), "--format", "json")
    result = json.loads(check.stdout)
    assert [f["message"] for f in result["findings"] if f["severity"] != "info"] == [] and check.returncode == 0
    assert any(r["fact"] == "LUN array-10-20-0-50:lun1" and not r["code"] for r in result["rows"])


def test_the_drafts_edit_is_one_step_that_one_revert_takes_back(lab):
    from app.asbuilt.draft import draft
    from topology.fileformat import loads
    os.environ["TESTBED_STUDIO_KNOWN_HOSTS"] = str(lab["lab"].known_hosts_path)
    bed = loads(BED, "bed.yaml")
    before = dumps(bed)
    result = draft(bed, lab["inventory"])
    assert not result.plan.problems and dumps(bed) == before, "planning changes nothing"
    result.plan.edit.apply()
    assert {s.id for s in bed.servers} == {"h1", "h2"} and len(bed.arrays) == 1
    result.plan.edit.revert()
    assert dumps(bed) == before


def test_the_beds_own_access_entries_are_read_when_no_inventory_is_given(lab, tmp_path):
    h = lab["lab"].hosts["h2"]
    bed = tmp_path / "bed.yaml"
    bed.write_text(BED + f"servers:\n  - {{id: h2, role: application}}\naccess:\n  - {{host: h2, transport: ssh, "
                         f"address: {h.address}, port: {h.port}, user: root, "
                         f"key_file: {lab['lab'].client_key_path}}}\n")
    done = _cli(lab["lab"], "import", str(bed), "--from-hosts")
    assert done.returncode == 0, done.stderr
    drafted = load(str(bed))
    (server,) = drafted.servers
    assert server.role == "application"          # what the bed says of the host stays
    assert any(p.name == "san1" and p.address == "10.20.0.12/24" for ad in server.adapters for p in ad.ports)
    assert [m.to for a in drafted.arrays for m in a.mappings] == ["h2"]


def test_an_unreachable_host_is_named_and_nothing_is_drafted_for_it(lab, tmp_path):
    inventory = tmp_path / "more.ini"
    inventory.write_text(Path(lab["inventory"]).read_text() + "gone ansible_host=127.0.0.1 ansible_port=9 "
                         "ansible_user=root\n")
    bed = tmp_path / "bed.yaml"
    bed.write_text(BED)
    done = _cli(lab["lab"], "import", str(bed), "--from-hosts", str(inventory), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "note: gone: not reached, nothing drafted for it" in done.stdout
    assert "+ server gone" not in done.stdout and "+ server h1" in done.stdout
