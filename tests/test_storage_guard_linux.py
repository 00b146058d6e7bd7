"""The Linux format step, generated from a bed and run for real: a userspace iSCSI target on
loopback (tgt) serves file-backed LUNs -- two of them LUN 1 of two targets, a non-empty decoy, a
LUN of the wrong size -- and each LUN's backing file is also a loop device, the block device the
script writes to.  Each LUN's identity (NAA WWN from VPD page 0x83, serial from page 0x80, vendor,
product) is read over iSCSI with libiscsi and handed to the script through the `udevadm` it calls
(no udev and no kernel initiator run here).  The script runs in a mount namespace of its own, with
its own /etc/fstab.  It must format exactly the volume's LUN and refuse every decoy, writing
nothing to it."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.iscsi_target import Lun, Target, available, identity_props, udev_shim
from topology import methodology as M
from topology.fileformat import loads

pytestmark = pytest.mark.skipif(bool(available()), reason=available() or "ready")

MIB = 1 << 20
FAMILIES = """array:
  - {family: tgt, pattern: 'tgt|SCSI target framework', name: Linux SCSI target framework,
     scsi_vendor: '^IET$', scsi_product: '^VIRTUAL-DISK$'}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The target, its LUNs, a loop device on each backing file, and the udevadm shim."""
    folder = tmp_path_factory.mktemp("iscsi")
    target = Target(folder)
    loops: list[str] = []
    try:
        luns = {
            "data": target.add("iqn.2026-01.org.testbed-studio:array-a", 1, 64 * MIB, "a.img"),
            "twin": target.add("iqn.2026-01.org.testbed-studio:array-b", 1, 64 * MIB, "b.img"),   # also LUN 1
            "full": target.add("iqn.2026-01.org.testbed-studio:array-b", 2, 64 * MIB, "c.img"),
            "small": target.add("iqn.2026-01.org.testbed-studio:array-b", 3, 16 * MIB, "d.img"),
        }
        subprocess.run(["mkfs.ext4", "-q", "-F", str(luns["full"].image)], check=True, timeout=60)
        for lun in luns.values():
            loops.append(subprocess.run(["losetup", "-f", "--show", str(lun.image)], check=True,
                                        capture_output=True, text=True, timeout=20).stdout.strip())
        bindir = udev_shim(folder, {str(lun.image): identity_props(target.portal, lun) for lun in luns.values()})
        yield {"folder": folder, "target": target, "luns": luns, "bin": bindir, "loops": loops}
    finally:
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], timeout=20)
        target.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bed(mount: Path, lun: Lun, *, size_gb: float = 0.0671, by: str = "wwn", mapped_lun: int = 1) -> str:
    identity = {"wwn": f"wwn: naa.{lun.wwn}", "serial": f"serial: {lun.serial}",
                "target": f"target: {lun.target}"}[by]
    return f"""format_version: 1
bed: {{name: guard test}}
servers:
  - {{id: db-1, role: application, os: Debian GNU/Linux 12 (bookworm), platform: linux, multipath: dm-multipath}}
arrays:
  - id: tgt1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    volumes:
      - {{name: data, size_gb: {size_gb}, drive: {mount}, file_system: ext4, {identity}}}
    hosts:
      - {{name: db-1, server: db-1}}
    mappings:
      - {{volume: data, to: db-1, lun: {mapped_lun}}}
"""


def _format_script(lab, bed_text: str) -> str:
    templates = lab["folder"] / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "families.yaml").write_text(FAMILIES)
    meth = M.generate(loads(bed_text, "guard-test.yaml"), extra_dirs=[templates])
    steps = [s for s in meth.steps() if s.template == "linux/connectivity.yaml#format"]
    assert len(steps) == 1 and steps[0].destructive and steps[0].runnable, [s.manual_reason for s in steps]
    return steps[0].automation[0].script


def _run(lab, script: str, before: str = "", keep_fstab: bool = False) -> subprocess.CompletedProcess:
    """The script as the host runs it, in a mount namespace with its own /etc/fstab."""
    folder = lab["folder"]
    if not keep_fstab:
        (folder / "fstab").write_text("# test fstab\n")
    (folder / "step.sh").write_text(script)
    wrapper = (f"set -e; mount --bind {folder}/fstab /etc/fstab; {before}\n"
               f"PATH={lab['bin']}:$PATH exec bash {folder}/step.sh")
    return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", wrapper],
                          capture_output=True, text=True, timeout=120)


def _images(lab) -> dict[str, str]:
    return {name: _digest(lun.image) for name, lun in lab["luns"].items()}


def _fs_type(image: Path) -> str:
    return subprocess.run(["blkid", "-p", "-s", "TYPE", "-o", "value", str(image)], capture_output=True,
                          text=True, timeout=20).stdout.strip()


def _wipe(lun: Lun) -> None:
    with open(lun.image, "r+b") as f:
        f.write(b"\0" * (4 * MIB))


def test_formats_the_volume_by_its_wwn_and_no_other_lun_one(lab, tmp_path):
    data = lab["luns"]["data"]
    _wipe(data)
    before = _images(lab)
    proc = _run(lab, _format_script(lab, _bed(tmp_path / "data", data)))
    assert proc.returncode == 0, proc.stderr
    assert _fs_type(data.image) == "ext4"
    after = _images(lab)
    assert {k for k in before if before[k] != after[k]} == {"data"}     # the twin LUN 1 is untouched
    assert "_netdev" in (lab["folder"] / "fstab").read_text()
    # run again (a resumed run): the volume is recognised as done, nothing is formatted twice
    formatted = _digest(data.image)
    again = _run(lab, _format_script(lab, _bed(tmp_path / "data", data)), keep_fstab=True)
    assert again.returncode == 0 and "in /etc/fstab already" in again.stdout, again.stderr
    assert _fs_type(data.image) == "ext4" and _images(lab)["twin"] == before["twin"]
    assert formatted and "mkfs" not in again.stdout


def test_the_target_tells_two_lun_ones_apart(lab, tmp_path):
    """With no WWN stated, the target name and the LUN select the disk: LUN 1 of array-b, not of array-a."""
    twin, data = lab["luns"]["twin"], lab["luns"]["data"]
    _wipe(twin)
    _wipe(data)
    before = _images(lab)
    proc = _run(lab, _format_script(lab, _bed(tmp_path / "twin", twin, by="target")))
    assert proc.returncode == 0, proc.stderr
    after = _images(lab)
    assert {k for k in before if before[k] != after[k]} == {"twin"}
    assert _fs_type(twin.image) == "ext4" and _fs_type(data.image) == ""


@pytest.mark.parametrize("decoy, size_gb, expect", [
    ("full", 0.0671, "already holds"),          # the right identity, but it holds a file system
    ("small", 0.0671, "bytes; the volume has"),  # the right identity, the wrong size
    ("data", 1.0, "bytes; the volume has"),      # the bed says 1 GB: a 64 MiB LUN is not it
])
def test_a_decoy_is_refused_and_nothing_is_written(lab, tmp_path, decoy, size_gb, expect):
    lun = lab["luns"][decoy]
    if decoy == "data":
        _wipe(lun)
    before = _images(lab)
    proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", lun, size_gb=size_gb)))
    assert proc.returncode != 0
    assert "refused, nothing was written" in proc.stderr and expect in proc.stderr, proc.stderr
    assert _images(lab) == before


def test_a_duplicated_identity_without_multipath_is_refused(lab, tmp_path):
    data = lab["luns"]["data"]
    _wipe(data)
    second = subprocess.run(["losetup", "-f", "--show", str(data.image)], check=True, capture_output=True,
                            text=True, timeout=20).stdout.strip()
    try:
        before = _images(lab)
        proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", data)))
        assert proc.returncode != 0 and "appears on 2 disks" in proc.stderr, proc.stderr
        assert _images(lab) == before
    finally:
        subprocess.run(["losetup", "-d", second], timeout=20)


def test_a_mounted_disk_is_refused(lab, tmp_path):
    full = lab["luns"]["full"]
    loop = lab["loops"][list(lab["luns"]).index("full")]
    mnt = tmp_path / "in-use"
    mnt.mkdir()
    before = _images(lab)
    # mounted read-only: the mount itself writes nothing
    proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", full)), before=f"mount -o ro,noload {loop} {mnt}")
    assert proc.returncode != 0 and "is mounted" in proc.stderr, proc.stderr
    assert _images(lab) == before


def test_another_vendors_disk_is_refused(lab, tmp_path):
    """The array family's SCSI vendor must be the device's: a DELL MD volume is never an IET LUN."""
    data = lab["luns"]["data"]
    _wipe(data)
    before = _images(lab)
    text = _bed(tmp_path / "x", data).replace("Linux SCSI target framework (tgt)", "Dell PowerVault MD3200i")
    proc = _run(lab, _format_script(lab, text))
    assert proc.returncode != 0 and "its vendor is not ^DELL$" in proc.stderr, proc.stderr
    assert _images(lab) == before


def test_no_disk_with_the_identity_is_refused_with_the_disks_it_saw(lab, tmp_path):
    data = lab["luns"]["data"]
    ghost = Lun(data.target, 1, data.image, wwn="6" + "0" * 30 + "9", serial="x")
    proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", ghost)))
    assert proc.returncode != 0 and "no disk on" in proc.stderr
    assert data.wwn in proc.stderr      # names what it found instead


def _cli_bed(lab, tmp_path: Path, lun: Lun) -> Path:
    bed = tmp_path / "bed.yaml"
    bed.write_text(_bed(tmp_path / "cli-data", lun) + "access:\n  - {host: db-1, transport: local}\n")
    return bed


def _cli(lab, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`testbed-studio run` as a user starts it, in a mount namespace with the test's fstab and udevadm."""
    import os
    import sys
    folder = lab["folder"]
    (folder / "fstab").write_text("# test fstab\n")
    env = {**os.environ, "TESTBED_STUDIO_STATE_DIR": str(tmp_path / "state"),
           "PATH": f"{lab['bin']}:{os.environ['PATH']}"}
    cmd = " ".join(f"'{a}'" for a in (sys.executable, "-m", "app.cli", "run", *args))
    return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                           f"mount --bind {folder}/fstab /etc/fstab && exec {cmd} < /dev/null"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=Path(__file__).parent.parent)


@pytest.mark.slow
def test_run_lists_the_disks_asks_before_writing_and_formats_with_yes_destructive(lab, tmp_path):
    data = lab["luns"]["data"]
    _wipe(data)
    bed = _cli_bed(lab, tmp_path, data)
    templates = lab["folder"] / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "families.yaml").write_text(FAMILIES)
    meth = M.generate(loads(bed.read_text(), "bed.yaml"), extra_dirs=[templates])
    number = next(s.number for s in meth.steps() if s.destructive)
    common = ["--templates", str(templates), "--steps", number]
    dry = _cli(lab, tmp_path, str(bed), "--dry-run", *common)
    assert dry.returncode == 0 and f"WRITES TO tgt1:data (WWN naa.{data.wwn}" in dry.stdout, dry.stdout + dry.stderr
    before = _images(lab)
    asked = _cli(lab, tmp_path, str(bed), *common)
    assert asked.returncode == 4, asked.stdout + asked.stderr
    assert f"naa.{data.wwn}" in asked.stdout and "--yes-destructive" in asked.stderr
    assert _images(lab) == before                      # nothing was written without the yes
    done = _cli(lab, tmp_path, str(bed), "--yes-destructive", *common)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _fs_type(data.image) == "ext4"
    after = _images(lab)
    assert {k for k in before if before[k] != after[k]} == {"data"}


def test_a_disk_whose_signatures_blkid_cannot_tell_apart_is_refused(lab, tmp_path):
    """Two file system signatures on one disk: `blkid -p` prints nothing and says "ambivalent result"
    (status 8). That is a disk holding data, never a blank one."""
    full = lab["luns"]["full"]          # ext4
    # a squashfs superblock in the ext4 boot block (bytes 0-1023, which ext4 leaves unused)
    superblock = bytearray(96)
    superblock[0:4] = b"hsqs"
    for offset, value, size in ((4, 1, 4), (12, 131072, 4), (18, 17, 2), (20, 1, 2), (28, 4, 2), (40, 4096, 8)):
        superblock[offset:offset + size] = value.to_bytes(size, "little")
    with open(full.image, "r+b") as f:
        kept = f.read(len(superblock))
        f.seek(0)
        f.write(superblock)
    try:
        assert subprocess.run(["blkid", "-p", "-o", "export", str(full.image)], capture_output=True,
                              timeout=20).returncode == 8
        before = _images(lab)
        proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", full)))
        assert proc.returncode != 0, proc.stdout
        assert "refused, nothing was written" in proc.stderr and "ambivalent" in proc.stderr, proc.stderr
        assert _images(lab) == before
    finally:
        with open(full.image, "r+b") as f:
            f.write(kept)


def test_a_copied_command_of_a_step_whose_size_is_not_stated_writes_nothing(lab, tmp_path):
    """With no size in the bed the step is done by hand, but "Copy command" still gives its script, with
    the size band as a placeholder; run as pasted, the guard refuses rather than skip the size check."""
    data = lab["luns"]["data"]
    _wipe(data)
    text = _bed(tmp_path / "x", data).replace("size_gb: 0.0671, ", "")
    templates = lab["folder"] / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "families.yaml").write_text(FAMILIES)
    meth = M.generate(loads(text, "guard-test.yaml"), extra_dirs=[templates])
    step = next(s for s in meth.steps() if s.template == "linux/connectivity.yaml#format")
    assert not step.runnable and "volume.min_bytes" in step.automation[0].script
    before = _images(lab)
    proc = _run(lab, step.automation[0].script)
    assert proc.returncode != 0, proc.stdout
    assert "refused, nothing was written" in proc.stderr and "size" in proc.stderr, proc.stderr
    assert _images(lab) == before


def test_a_wwn_that_is_empty_once_normalised_matches_no_disk(lab, tmp_path):
    """`TB_WWN=naa.` (a lab's own template, a value cut short) normalises to nothing: it must not match
    the one disk that shows no WWN. Here udev shows a WWN for every disk but one blank LUN of the right size."""
    from topology.methodology.guards import guard_library
    data = lab["luns"]["data"]
    _wipe(data)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "udevadm").write_text(f"""#!/bin/bash
for a in "$@"; do case $a in --name=*) dev=${{a#--name=/dev/}} ;; esac; done
[ "$(cat "/sys/class/block/$dev/loop/backing_file" 2>/dev/null)" = {str(data.image)!r} ] && exit 0
printf 'ID_WWN=0x5%015x\\n' "$(cat "/sys/class/block/$dev/dev" | tr -d :)"
""")
    (bindir / "udevadm").chmod(0o755)
    script = (guard_library("linux-block") + "\nset -euo pipefail\nTB_VOLUME=tgt1:data TB_WWN=naa. "
              f"TB_MIN_BYTES={60 * MIB} TB_MAX_BYTES={70 * MIB}\ntb_select\necho \"selected $TB_DEVICE\"\n")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin"})
    assert proc.returncode != 0 and "selected" not in proc.stdout, proc.stdout
    assert "TB_WWN naa. is no WWN" in proc.stderr, proc.stderr


def test_a_target_whose_name_ends_in_the_volumes_target_is_not_it(lab, tmp_path):
    """udev names an iSCSI path ip-PORTAL-iscsi-TARGET-lun-N: the volume's target must be all of TARGET,
    not its tail. Here another target's IQN ends in "-iscsi-" and the volume's IQN, and only it has LUN 5."""
    target, folder = lab["target"], lab["folder"]
    ours = "iqn.2026-01.org.testbed-studio:array-a"
    other = target.add(f"iqn.2026-01.org.testbed-studio:other-iscsi-{ours}", 5, 64 * MIB, "e.img")
    loop = subprocess.run(["losetup", "-f", "--show", str(other.image)], check=True, capture_output=True,
                          text=True, timeout=20).stdout.strip()
    luns = [*lab["luns"].values(), other]
    udev_shim(folder, {str(lun.image): identity_props(target.portal, lun) for lun in luns})
    try:
        before = _digest(other.image)
        proc = _run(lab, _format_script(lab, _bed(tmp_path / "x", Lun(ours, 5, other.image), by="target",
                                                  mapped_lun=5)))
        assert proc.returncode != 0 and "no disk on" in proc.stderr, proc.stderr
        assert _digest(other.image) == before
    finally:
        subprocess.run(["losetup", "-d", loop], timeout=20)
        udev_shim(folder, {str(lun.image): identity_props(target.portal, lun) for lun in luns[:-1]})
