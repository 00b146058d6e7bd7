"""A volume the bed reuses (`reuse: true`): its file system is kept.  Generated from a bed and run for
real against loop devices behind a userspace iSCSI target on loopback (the harness of
tests/test_storage_guard_linux.py): the step selects the LUN by its identity, finds the file system
labelled with the volume's label (else its name), adds it to /etc/fstab and mounts it -- and never
runs mkfs: the file system keeps its UUID and its files.  A LUN without that file system is refused,
and nothing is written to it; the bed's volume never gets a format step."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.iscsi_target import available
from tests.test_storage_guard_linux import FAMILIES, _bed, _digest, _run, lab  # noqa: F401  (lab: the fixture)
from topology import methodology as M
from topology.fileformat import loads

pytestmark = pytest.mark.skipif(bool(available()), reason=available() or "ready")


def _reused(text: str, label: str = "") -> str:
    extra = f" label: {label}," if label else ""
    assert "{name: data, " in text
    return text.replace("{name: data, ", "{name: data, reuse: true," + extra + " ", 1)


def _steps(lab, bed_text: str):
    templates = lab["folder"] / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "families.yaml").write_text(FAMILIES)
    return list(M.generate(loads(bed_text, "reuse-test.yaml"), extra_dirs=[templates]).steps())


def _kept_script(lab, bed_text: str) -> str:
    steps = _steps(lab, bed_text)
    assert not [s for s in steps if s.destructive], "a reused volume gets no format step"
    kept = [s for s in steps if s.template == "linux/connectivity.yaml#mount-kept"]
    assert len(kept) == 1 and kept[0].runnable, [(s.template, s.manual_reason) for s in steps]
    return kept[0].automation[0].script


def _uuid(image: Path) -> str:
    return subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", str(image)], capture_output=True, text=True,
                          timeout=20).stdout.strip()


def _loop(lab, name: str) -> str:
    """The block device of a LUN's backing file: written through it, as a host writes to its disk (writing the
    file behind the loop device's back would leave it reading stale blocks)."""
    return lab["loops"][list(lab["luns"]).index(name)]


def _make_fs(lab, name: str, label: str) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", label, _loop(lab, name)], check=True, timeout=60)


@pytest.mark.parametrize("label", ["", "SQLDATA"])
def test_the_kept_file_system_is_mounted_and_never_formatted(lab, tmp_path, label):
    """The labelled ext4 on the LUN is found, put in /etc/fstab by its UUID and mounted; its UUID (and so
    its contents) stays, and the LUN 1 twin on the other target is untouched."""
    full, twin = lab["luns"]["full"], lab["luns"]["twin"]
    _make_fs(lab, "full", label or "data")
    uuid = _uuid(full.image)
    twin_before = _digest(twin.image)
    mnt = tmp_path / "kept"
    script = _kept_script(lab, _reused(_bed(mnt, full), label))
    assert "mkfs" not in script.split("# --- end of guard", 1)[1]
    # the check runs in the step's mount namespace, right after it
    proc = _run(lab, script + f"\nfindmnt -n -o SOURCE,FSTYPE,TARGET {mnt}\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1:] == ["ext4", str(mnt)], proc.stdout
    assert _uuid(full.image) == uuid, "the file system was made again"
    fstab = (lab["folder"] / "fstab").read_text()
    assert f"UUID={uuid} {mnt} ext4 defaults,_netdev 0 0" in fstab
    assert _digest(twin.image) == twin_before
    # run again (a resumed run): the fstab line is not added twice
    again = _run(lab, script, keep_fstab=True)
    assert again.returncode == 0, again.stderr
    assert (lab["folder"] / "fstab").read_text().count(f"UUID={uuid} ") == 1


@pytest.mark.parametrize("prepare, expect", [
    ("blank", "holds nothing: no file system"),
    ("other-label", ":ext4:scratch"),
])
def test_a_lun_without_the_kept_file_system_is_refused_and_nothing_is_written(lab, tmp_path, prepare, expect):
    full = lab["luns"]["full"]
    if prepare == "blank":
        subprocess.run(["dd", "if=/dev/zero", f"of={_loop(lab, 'full')}", "bs=1M", "count=4", "conv=fsync",
                        "status=none"], check=True, timeout=60)
    else:
        _make_fs(lab, "full", "scratch")
    before = _digest(full.image)
    proc = _run(lab, _kept_script(lab, _reused(_bed(tmp_path / "kept", full))))
    assert proc.returncode != 0
    assert "refused, nothing was written" in proc.stderr and "labelled data" in proc.stderr, proc.stderr
    assert expect in proc.stderr, proc.stderr
    assert _digest(full.image) == before
    assert "UUID=" not in (lab["folder"] / "fstab").read_text()
