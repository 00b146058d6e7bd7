"""A fio load on a volume's raw disk, as a Linux lab writes it: two LUNs of one tgt target on loopback
(the volume's and a neighbour of the same size), and a loop device that is no part of the bed, the
decoy.  The load step must run on the disk that has the volume's identity and no other; a load that
writes (a 64k sequential write phase) is a step that writes to a disk -- listed, confirmed, guarded --
and refuses a disk that holds a file system; a device name typed into fio's parameters never reaches
a command that writes.  Each LUN's identity reaches the guard through the `udevadm` shim
(tests/iscsi_target.py), the script runs in a mount namespace of its own, as
tests/test_storage_guard_linux.py runs the format step."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.iscsi_target import Lun, Target, available, identity_props, udev_shim
from topology import methodology as M
from topology.fileformat import loads

MIB = 1 << 20
FAMILIES = """array:
  - {family: tgt, pattern: 'tgt|SCSI target framework', name: Linux SCSI target framework,
     scsi_vendor: '^IET$', scsi_product: '^VIRTUAL-DISK$'}
"""
IQN = "iqn.2026-11.org.testbed-studio:loads"


def _bed(volume: str = "", serial: str = "", mix: str = "{block_kb: 64, read_pct: 0, random_pct: 0}",
         filename: str = "", targets: str = "['array1:node1-data']", drive: str = "") -> str:
    params = "{iodepth: 4" + (f", filename: {filename}" if filename else "") + "}"
    return f"""format_version: 1
bed: {{name: fio on a raw LUN}}
servers:
  - {{id: deb1, role: load_client, os: Debian GNU/Linux 12 (bookworm), platform: linux}}
arrays:
  - id: array1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    volumes:
      - {{name: node1-data, size_gb: 0.0168, serial: '{serial or "beaf11"}', target: '{IQN}'{drive}}}
    hosts:
      - {{name: deb1, server: deb1}}
    mappings:
      - {{volume: node1-data, to: deb1, lun: 1}}
workloads:
  - id: seqwrite
    tool: fio
    driver: deb1
    targets: {targets}
    access: [{mix}]
    parameters: {params}
    duration_minutes: 0.02
access:
  - {{host: deb1, transport: local}}
"""


def _load_step(text: str, templates: Path | None = None):
    meth = M.generate(loads(text, "loads.yaml"), extra_dirs=[templates] if templates else [])
    steps = [s for s in meth.steps() if s.template == "linux/run.yaml#load"]
    assert len(steps) == 1, [s.template for s in meth.steps()]
    return steps[0]


def test_a_write_to_a_typed_device_name_never_runs():
    """fio's `filename: /dev/sdb` with writes in the mix: the device name says nothing of which disk it is."""
    text = _bed(filename="/dev/sdb", targets="[deb1]")
    step = _load_step(text)
    assert step.destructive and step.manual and not step.automation
    assert "identity" in step.manual_reason, step.manual_reason
    # the run says why where it stops for the step (run --dry-run, the manual prompt, the Run tab)
    from app.run.plan import run_steps
    meth = M.generate(loads(text, "loads.yaml"))
    planned = [r for r in run_steps(meth, {"deb1": "local"}) if r.number == step.number]
    assert planned[0].manual and "without an identity the bed states" in planned[0].why_manual
    read = _load_step(_bed(filename="/dev/sdb", targets="[deb1]", mix="{block_kb: 4, read_pct: 100}"))
    assert not read.destructive and read.automation        # a read hurts nothing: it runs as typed


def test_a_load_on_a_volume_selects_its_disk_by_identity():
    write = _load_step(_bed(filename="/dev/sdb"))          # the volume wins over a typed name
    assert write.destructive and write.devices == ["array1:node1-data (serial beaf11, 0.017 GB)"]
    script = write.automation[0].script
    assert '--filename="$TB_DEVICE"' in script and "/dev/sdb" not in script and "tb_select" in script
    assert "TB_SERIAL=beaf11" in script and "TB_LUN=1" in script
    # the words that name the disk come from the field it is told apart by
    assert write.sources["the disk with serial beaf11 (0.017 GB)"] == "array1:node1-data.serial"
    read = _load_step(_bed(mix="{block_kb: 4, read_pct: 100}"))
    assert not read.destructive and "tb_select" in read.automation[0].script
    unseen = _load_step(_bed(filename="/dev/sdb").replace("      - {volume: node1-data, to: deb1, lun: 1}\n", ""))
    assert unseen.manual and "array1:node1-data is not mapped to deb1, which cannot see that LUN" in unseen.text
    no_identity = _load_step(_bed().replace("serial: 'beaf11', target: '" + IQN + "'", "serial: ''"))
    assert no_identity.manual and "no WWN, serial, or target and LUN" in no_identity.manual_reason


needs_lab = pytest.mark.skipif(bool(available()), reason=available() or "ready")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("loads")
    target = Target(folder)
    loops: list[str] = []
    try:
        luns = {"node1": target.add(IQN, 1, 16 * MIB, "node1.img"),
                "neighbour": target.add(IQN, 2, 16 * MIB, "neighbour.img")}
        decoy = folder / "decoy.img"
        with open(decoy, "wb") as f:
            f.truncate(16 * MIB)
        for image in [lun.image for lun in luns.values()] + [decoy]:
            loops.append(subprocess.run(["losetup", "-f", "--show", str(image)], check=True,
                                        capture_output=True, text=True, timeout=20).stdout.strip())
        bindir = udev_shim(folder, {str(lun.image): identity_props(target.portal, lun) for lun in luns.values()})
        templates = folder / "templates"
        templates.mkdir()
        (templates / "families.yaml").write_text(FAMILIES)
        yield {"folder": folder, "luns": luns, "decoy": decoy, "bin": bindir, "templates": templates}
    finally:
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], timeout=20)
        target.close()


def _digests(lab) -> dict[str, str]:
    files = {name: lun.image for name, lun in lab["luns"].items()} | {"decoy": lab["decoy"]}
    return {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in files.items()}


def _run(lab, text: str) -> subprocess.CompletedProcess:
    step = _load_step(text, lab["templates"])
    assert step.automation, step.manual_reason
    folder = lab["folder"]
    (folder / "step.sh").write_text(step.automation[0].script)
    return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                           f"cd {folder} && PATH={lab['bin']}:$PATH exec bash {folder}/step.sh"],
                          capture_output=True, text=True, timeout=60)


@needs_lab
def test_the_write_phase_writes_the_volumes_lun_only(lab):
    lun = lab["luns"]["node1"]
    with open(lun.image, "r+b") as f:
        f.write(b"\0" * MIB)
    before = _digests(lab)
    proc = _run(lab, _bed(serial=lun.serial))
    assert proc.returncode == 0, proc.stderr
    after = _digests(lab)
    assert {k for k in before if before[k] != after[k]} == {"node1"}     # not the neighbour LUN, not the decoy


@needs_lab
def test_a_write_phase_refuses_a_disk_that_holds_a_file_system_or_is_not_there(lab):
    neighbour: Lun = lab["luns"]["neighbour"]
    subprocess.run(["mkfs.ext4", "-q", "-F", str(neighbour.image)], check=True, timeout=60)
    before = _digests(lab)
    held = _run(lab, _bed(serial=neighbour.serial).replace("lun: 1}", "lun: 2}"))   # formatted meanwhile
    assert held.returncode != 0 and "refused, nothing was written" in held.stderr, held.stderr
    assert "already holds" in held.stderr
    ghost = _run(lab, _bed(serial="nosuchserial"))               # a typo in the serial
    assert ghost.returncode != 0 and "no disk on" in ghost.stderr and "nosuchserial" in ghost.stderr
    assert _digests(lab) == before


def test_the_disk_a_load_runs_on_raw_is_not_formatted_first():
    """A procedure that made ext4 on the load's disk would have its own write phase refused (or write over it)."""
    def formats(text: str) -> list[str]:
        return [s.number for s in M.generate(loads(text, "loads.yaml")).steps()
                if s.template == "linux/connectivity.yaml#format"]
    assert formats(_bed()) == []
    assert len(formats(_bed(targets="[deb1]", filename="/srv/fio.dat"))) == 1      # no load on it: it is formatted


@needs_lab
def test_a_lun_presented_under_another_number_is_refused(lab):
    """The bed says LUN 2; the disk with the volume's serial is LUN 1 of the target (the mappings were swapped)."""
    lun = lab["luns"]["node1"]
    before = _digests(lab)
    proc = _run(lab, _bed(serial=lun.serial).replace("lun: 1}", "lun: 2}"))
    assert proc.returncode != 0 and f"is not LUN 2 of {IQN}" in proc.stderr, proc.stderr
    assert _digests(lab) == before


def test_a_load_names_no_lun_that_only_another_hosts_mapping_states():
    """The volume is LUN 7 of deb2 and mapped to deb1, which runs the load, with no number: on deb1 the LUN
    may have any number, so neither the words nor the guard's TB_LUN may say 7."""
    deb2 = "  - {id: deb2, role: load_client, os: Debian GNU/Linux 12 (bookworm), platform: linux}\n"
    text = _bed().replace("  - {id: deb1,", deb2 + "  - {id: deb1,")
    text = text.replace("      - {name: deb1, server: deb1}",
                        "      - {name: deb1, server: deb1}\n      - {name: deb2, server: deb2}")
    text = text.replace("      - {volume: node1-data, to: deb1, lun: 1}",
                        "      - {volume: node1-data, to: deb2, lun: 7}\n      - {volume: node1-data, to: deb1}")
    step = _load_step(text)
    assert step.automation and "TB_SERIAL=beaf11" in step.automation[0].script
    assert "LUN 7" not in step.text and "TB_LUN=7" not in step.automation[0].script, step.text


@pytest.mark.parametrize("filename", ["//dev/sdb", "/./dev/sdb", "/proc/self/root/dev/sdb", "../../dev/sdb",
                                      "'/mnt/data/fio.dat:/dev/sdb'"])
def test_a_write_to_a_device_name_written_another_way_never_runs(filename):
    """The kernel opens /dev/sdb however it is written, and fio writes every name of a ':' list: each is a
    write to a disk named without an identity, as `/dev/sdb` is."""
    step = _load_step(_bed(filename=filename, targets="[deb1]"))
    assert step.destructive and step.manual and not step.automation, filename
    kept = _load_step(_bed(filename="'/mnt/data/fio.dat'", targets="[deb1]"))
    assert not kept.destructive and kept.automation          # a file on a file system is no disk
