"""WWNs learnt from a real iSCSI target go back into the bed, and the guarded format step then
selects its disk by them.  A userspace target (tgt) on loopback serves two LUN 1s of two targets
(tests/iscsi_target.py); each LUN's WWN and serial are read over iSCSI with libiscsi (VPD 0x83,
0x80) and written into a sandbox host's udev database for the loop device on its backing file, and
the host's session list is laid out from the target (its targets, portal and LUNs) -- no kernel
initiator runs here.  The bed names only the volume's target; `testbed-studio check --learn` reads
the host and writes the WWN and serial into the file as one change (one undo in the designer);
the format step generated from the changed bed selects the disk by that WWN and, run for real,
formats that LUN and not its twin."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bench.sandbox_hosts import SandboxLab
from tests import asbuilt_lab as L
from tests.iscsi_target import Target, available, identity_props, udev_shim
from topology import methodology as M
from topology.fileformat import load, loads

pytestmark = [pytest.mark.skipif(bool(available()), reason=available() or "ready"),
              pytest.mark.skipif(SandboxLab.netns_unavailable_reason() is not None,
                                 reason=str(SandboxLab.netns_unavailable_reason()))]

MIB = 1 << 20
A, B = "iqn.2026-01.org.testbed-studio:learn-a", "iqn.2026-01.org.testbed-studio:learn-b"
FAMILIES = """array:
  - {family: tgt, pattern: 'tgt|SCSI target framework', name: Linux SCSI target framework,
     scsi_vendor: '^IET$', scsi_product: '^VIRTUAL-DISK$'}
"""


def _session_list(portal: str, luns: dict[str, tuple[str, str]]) -> str:
    """iscsiadm -m session -P 3's layout for the target's sessions: target -> (LUN 1's device)."""
    address = portal.split(":")[0]
    out = ["iSCSI Transport Class version 2.0-870", "version 2.1.8"]
    for sid, (target, device) in enumerate(luns.values(), start=1):
        out += [f"Target: {target} (non-flash)", f"\tCurrent Portal: {portal},1", f"\tPersistent Portal: {portal},1",
                "\t\tIface Name: default", "\t\tIface Transport: tcp",
                "\t\tIface Initiatorname: iqn.1993-08.org.debian:01:h1", f"\t\tIface IPaddress: {address}",
                f"\t\tSID: {sid}", "\t\tiSCSI Session State: LOGGED_IN", "\t\t************************",
                "\t\tAttached SCSI devices:", "\t\t************************", f"\t\tHost Number: {sid}\tState: running",
                f"\t\tscsi{sid} Channel 00 Id 0 Lun: 1", f"\t\t\tAttached scsi disk {device}\t\tState: running"]
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("learn")
    target = Target(folder)
    loops: list[str] = []
    try:
        data = target.add(A, 1, 64 * MIB, "a.img")
        twin = target.add(B, 1, 64 * MIB, "b.img")
        for lun in (data, twin):
            loops.append(L.loop_device(lun.image))
        with SandboxLab(folder / "lab") as sandbox:
            sandbox.add_netns_host("h1")
            for lun, loop in zip((data, twin), loops, strict=True):
                L.udev_entry(sandbox, "h1", loop, identity_props(target.portal, lun))
            L.iscsiadm_shim(sandbox, "h1", folder / "h1-bin", _session_list(
                target.portal, {"data": (A, loops[0].rsplit("/", 1)[1]), "twin": (B, loops[1].rsplit("/", 1)[1])}))
            yield {"folder": folder, "target": target, "data": data, "twin": twin, "lab": sandbox,
                   "bin": udev_shim(folder, {str(lun.image): identity_props(target.portal, lun)
                                             for lun in (data, twin)})}
    finally:
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], timeout=20)
        target.close()


def _bed(ctx, mount) -> str:
    access = json.dumps(L.ssh_access(ctx["lab"], "h1"))
    return f"""format_version: 1
bed: {{name: learn test}}   # a comment that must survive the write-back
servers:
  - {{id: h1, role: application, os: Debian GNU/Linux 12 (bookworm), platform: linux}}
arrays:
  - id: tgt1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    volumes:
      - {{name: data, size_gb: 0.0671, drive: {mount}, file_system: ext4, target: {A}}}
    hosts:
      - {{name: h1, server: h1}}
    mappings:
      - {{volume: data, to: h1, lun: 1}}
access:
  - {access}
"""


def _format_step(ctx, bed):
    templates = ctx["folder"] / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "families.yaml").write_text(FAMILIES)
    meth = M.generate(bed, extra_dirs=[templates])
    steps = [s for s in meth.steps() if s.template == "linux/connectivity.yaml#format"]
    assert len(steps) == 1 and steps[0].runnable, [s.manual_reason for s in steps]
    return steps[0]


def _digest(path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_learnt_wwn_is_written_back_in_one_edit_and_the_format_step_selects_by_it(lab, tmp_path):
    path = tmp_path / "bed.yaml"
    path.write_text(_bed(lab, tmp_path / "data"))
    before = _format_step(lab, load(path))
    assert lab["data"].wwn not in before.automation[0].script        # selected by target and LUN so far
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(lab["lab"].known_hosts_path)}
    done = subprocess.run([sys.executable, "-m", "app.cli", "check", str(path), "--learn"], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"tgt1:data wwn: naa.{lab['data'].wwn}" in done.stdout, done.stdout
    text = path.read_text()
    assert "# a comment that must survive the write-back" in text
    vol = load(path).arrays[0].volumes[0]
    assert (vol.wwn, vol.serial) == (f"naa.{lab['data'].wwn}", lab["data"].serial)
    assert lab["twin"].wwn not in text                     # LUN 1 of the other target is not this volume

    # the designer's path: the same edit, one undo step
    from app.asbuilt.gather import gather
    from app.remote.connect import TransportFactory
    from topology.asbuilt import check
    from topology.asbuilt.learn import learn_edit
    bed = loads(_bed(lab, tmp_path / "data"), "bed.yaml")
    factory = TransportFactory(bed, known_hosts=lab["lab"].known_hosts_path)
    plan = learn_edit(bed, check(bed, gather(bed, factory).facts).learnt)
    v = bed.arrays[0].volumes[0]
    plan.edit.apply()
    assert v.wwn == f"naa.{lab['data'].wwn}"
    plan.edit.revert()
    assert (v.wwn, v.serial) == ("", "")

    # the guarded format step now selects the disk by the learnt WWN, and formats that LUN only
    step = _format_step(lab, load(path))
    script = step.automation[0].script
    assert lab["data"].wwn in script and "WWN" in step.text, step.text
    with open(lab["data"].image, "r+b") as f:
        f.write(b"\0" * (4 * MIB))
    twin_before = _digest(lab["twin"].image)
    folder = lab["folder"]
    (folder / "fstab").write_text("# test fstab\n")
    (folder / "step.sh").write_text(script)
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                          f"set -e; mount --bind {folder}/fstab /etc/fstab; "
                          f"PATH={lab['bin']}:$PATH exec bash {folder}/step.sh"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    fs = subprocess.run(["blkid", "-p", "-s", "TYPE", "-o", "value", str(lab["data"].image)], capture_output=True,
                        text=True, timeout=20).stdout.strip()
    assert fs == "ext4" and _digest(lab["twin"].image) == twin_before
