"""The as-built check against real hosts: four sandbox sshd hosts in network namespaces, each with
SAN interfaces (veth pairs with addresses, MTUs, link state), loop devices that stand for LUNs
(known to each host by its own udev database, as lsblk reads them), and on h4 the session list of
a real host (tests/data/captures/asbuilt/, the oVirt capture: one session where the drawing gives
two).  Five differences are planted -- a wrong MTU, a wrong address, a link down, a missing LUN,
one iSCSI session short -- and the check must name exactly those five; with the hosts fixed, none.
It goes through `testbed-studio check`, the command a user types."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.sandbox_hosts import SandboxLab
from tests import asbuilt_lab as L

pytestmark = pytest.mark.skipif(SandboxLab.netns_unavailable_reason() is not None,
                                reason=f"no namespace hosts here: {SandboxLab.netns_unavailable_reason()}")

CAPTURE = Path(__file__).parent / "data" / "captures" / "asbuilt" / "iscsiadm_session_P3_ovirt_he.txt"
# the WWID the capture's host shows for LUN 1 of target ...:he (its `lsblk /dev/sde`), as a bare NAA
HE_WWN = "6589cfc000000ab67ee1427370d68436"
WWNS = {"vol1": "600140511111111111111111111111a1", "vol2": "600140522222222222222222222222a2",
        "vol3": "600140533333333333333333333333a3", "he": HE_WWN}
MIB = 1 << 20


def _bed(lab: SandboxLab) -> str:
    access = "\n".join(f"  - {json.dumps(L.ssh_access(lab, h))}" for h in ("h1", "h2", "h3", "h4"))
    servers = "\n".join(f"""  - id: h{i}
    role: application
    platform: linux
    adapters:
      - name: NIC1
        ports:
          - {{name: san1, roles: [iscsi], address: 192.168.130.1{i}/24, mtu: 9000}}""" for i in (1, 2, 3))
    return f"""format_version: 1
bed: {{name: as-built check}}
servers:
{servers}
  - id: h4
    role: application
    platform: linux
    multipath: dm-multipath
    adapters:
      - name: NIC1
        ports:
          - {{name: san1, roles: [iscsi], address: 192.168.1.14/24, mtu: 9000}}
          - {{name: san2, roles: [iscsi], address: 192.168.1.15/24, mtu: 9000}}
switches:
  - {{id: sw1, kind: ethernet, mtu: 9000}}
links:
  - {{a: h4:san1, b: sw1:1}}
  - {{a: h4:san2, b: sw1:2}}
  - {{a: arr1:P0, b: sw1:3}}
arrays:
  - id: arr1
    model: tgt
    connectivity: iscsi
    controllers:
      - name: A
        ports:
          - {{name: P0, roles: [iscsi], address: 192.168.1.125/24, mtu: 9000}}
    volumes:
""" + "".join(f"      - {{name: {v}, size_gb: 0.0671, wwn: naa.{w}}}\n" for v, w in WWNS.items()) + """    hosts:
""" + "".join(f"      - {{name: h{i}, server: h{i}}}\n" for i in (1, 2, 3, 4)) + """    mappings:
      - {volume: vol1, to: h1, lun: 1}
      - {volume: vol2, to: h2, lun: 1}
      - {volume: vol3, to: h3, lun: 1}
      - {volume: he, to: h4, lun: 1}
access:
""" + access + "\n"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("asbuilt")
    loops: list[str] = []
    with SandboxLab(folder / "lab") as lab:
        try:
            for i in (1, 2, 3, 4):
                lab.add_netns_host(f"h{i}")
            for i in (1, 2, 3):
                L.add_san_port(lab, f"h{i}", "san1", f"192.168.130.1{i}/24")
            L.add_san_port(lab, "h4", "san1", "192.168.1.14/24")
            L.add_san_port(lab, "h4", "san2", "192.168.1.15/24")
            devices = {}
            for name in WWNS:
                image = folder / f"{name}.img"
                with open(image, "wb") as f:
                    f.truncate(64 * MIB)
                devices[name] = L.loop_device(image)
                loops.append(devices[name])
            for host, vol in (("h1", "vol1"), ("h2", "vol2"), ("h3", "vol3"), ("h4", "he")):
                L.udev_entry(lab, host, devices[vol], L.lun_props(WWNS[vol], f"SN-{vol}"))
            L.iscsiadm_shim(lab, "h4", folder / "h4-bin", _two_sessions())
            yield {"lab": lab, "folder": folder, "devices": devices}
        finally:
            for loop in loops:
                subprocess.run(["losetup", "-d", loop], timeout=20)


def _check(lab, bed: Path, *args: str) -> tuple[int, dict]:
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(lab.known_hosts_path)}
    done = subprocess.run([sys.executable, "-m", "app.cli", "check", str(bed), "--format", "json", *args],
                          capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _plant(ctx) -> None:
    lab = ctx["lab"]
    L.set_port(lab, "h1", "san1", mtu=1500)                                             # wrong MTU
    L.set_port(lab, "h2", "san1", address=("192.168.130.12/24", "192.168.130.22/24"))   # wrong address
    L.set_port(lab, "h3", "san1", peer_up=False)                                        # a link down
    L.forget_udev_entry(lab, "h3", ctx["devices"]["vol3"])                              # a missing LUN
    # h4 lists the captured host's sessions: one (from 192.168.1.14) where the drawing gives two
    (ctx["folder"] / "h4-bin" / "sessions.txt").write_text(CAPTURE.read_text())


def _two_sessions() -> str:
    """The capture with the second session the drawing gives: its ...:he block again, leaving from
    the second port."""
    text = CAPTURE.read_text()
    second = text[text.index("Target: iqn.2017-10.com.redhat.stirabos:he"):].replace(
        "Iface IPaddress: 192.168.1.14", "Iface IPaddress: 192.168.1.15").replace("SID: 4", "SID: 5")
    return text + second


def _fix(ctx) -> None:
    lab = ctx["lab"]
    L.set_port(lab, "h1", "san1", mtu=9000)
    L.set_port(lab, "h2", "san1", address=("192.168.130.22/24", "192.168.130.12/24"))
    L.set_port(lab, "h3", "san1", peer_up=True)
    L.udev_entry(lab, "h3", ctx["devices"]["vol3"], L.lun_props(WWNS["vol3"], "SN-vol3"))
    (ctx["folder"] / "h4-bin" / "sessions.txt").write_text(_two_sessions())


@pytest.mark.slow
def test_five_planted_differences_give_exactly_five_findings_and_fixed_hosts_none(lab, tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text(_bed(lab["lab"]))
    code, clean = _check(lab["lab"], bed)
    assert [f["message"] for f in clean["findings"]] == [] and code == 0, "the lab starts as drawn"
    assert sorted(clean["hosts"]) == ["h1", "h2", "h3", "h4"]
    try:
        _plant(lab)
        code, result = _check(lab["lab"], bed)
        found = sorted((f["code"], f["subjects"][0]) for f in result["findings"])
        assert found == [("ASB-002", "h2:san1"), ("ASB-003", "h1:san1"), ("ASB-006", "h3:san1"),
                         ("ASB-007", "h4"), ("ASB-009", "arr1:vol3")], [f["message"] for f in result["findings"]]
        assert code == 1
        by_code = {f["code"]: f["message"] for f in result["findings"]}
        assert "MTU 1500" in by_code["ASB-003"] and "9000" in by_code["ASB-003"]
        assert "192.168.130.22/24" in by_code["ASB-002"] and "192.168.130.12/24" in by_code["ASB-002"]
        assert "h4:san2 (192.168.1.15)" in by_code["ASB-007"] and "1 iSCSI session" in by_code["ASB-007"]
        assert "naa." + WWNS["vol3"] in by_code["ASB-009"]
    finally:
        _fix(lab)
    code, fixed = _check(lab["lab"], bed)
    assert [f["message"] for f in fixed["findings"]] == [] and code == 0
    sessions = next(r for r in fixed["rows"] if r["host"] == "h4" and r["fact"].startswith("iSCSI"))
    assert (sessions["expected"], sessions["seen"]) == ("2", "2")
