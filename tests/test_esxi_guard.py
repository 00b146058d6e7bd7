"""The ESXi datastore step, generated from a bed and run on recorded ESXi output: no ESXi runs here,
so `esxcli`, `partedUtil` and `vmkfstools` are replaced by programs that print what real hosts
printed (tests/data/captures/esxi/, sources in tests/data/captures/README.md) and write down every
command that would change a disk.  The guard is POSIX sh (the ESXi shell is busybox ash): each case
runs under dash and under bash.  The step must make the VMFS datastore on exactly the device named
naa.<the volume's WWN> -- GPT label, one VMFS partition from sector 2048 to the last usable sector,
vmkfstools -C -- and refuse, writing nothing, a device of another WWN, of the wrong size or vendor,
an access LUN, one listed twice, one holding a partition table or a datastore."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.storage_identity import with_identities
from topology import methodology as M
from topology.synthetic_platforms import PLATFORM_CASES, platform_bed

CAPTURES = Path(__file__).parent / "data" / "captures" / "esxi"
SUN = "naa.600144f0876a9c47000052b744210009"        # the SUN COMSTAR iSCSI LUN of the capture, 10240 MB
SHELLS = [s for s in ("dash", "bash") if subprocess.run(["sh", "-c", f"command -v {s}"],
                                                         capture_output=True).returncode == 0]

# programs that print what real ESXi hosts printed; a command that writes is only written down
FAKE_ESXCLI = """#!/bin/sh
case "$*" in
  "storage core device list") cat "$TB_CAP_DEVICES" ;;
  "storage vmfs extent list") if [ -n "${TB_EXTENTS_FAIL:-}" ]; then echo "$TB_EXTENTS_FAIL" >&2; exit 1; fi
                              cat "$TB_CAP_EXTENTS" ;;
  *) echo "esxcli $*" >> "$TB_WRITES" ;;
esac
"""
FAKE_PARTEDUTIL = """#!/bin/sh
case "$1" in
  getptbl) cat "$TB_CAP_PTBL" ;;
  getUsableSectors) cat "$TB_CAP_USABLE" ;;
  *) printf 'partedUtil' >> "$TB_WRITES"
     for a in "$@"; do printf ' [%s]' "$a" >> "$TB_WRITES"; done
     echo >> "$TB_WRITES" ;;
esac
"""
FAKE_VMKFSTOOLS = """#!/bin/sh
printf 'vmkfstools' >> "$TB_WRITES"; for a in "$@"; do printf ' [%s]' "$a" >> "$TB_WRITES"; done; echo >> "$TB_WRITES"
"""


def _case(case_id: str):
    return next(c for c in PLATFORM_CASES if c.id == case_id)


def _script(*, wwn: str = SUN, size_gb: float = 10, array_model: str = "", case_id: str = "esxi80") -> str:
    """The script of the datastore step for the bed's first volume, as the methodology gives it."""
    bed = with_identities(platform_bed(_case(case_id), "fc"))
    array = bed.arrays[0]
    if array_model:
        array.model = array_model
    volume = array.volumes[0]
    volume.wwn, volume.size_gb = wwn, size_gb
    steps = [s for s in M.generate(bed).steps()
             if s.template == "esxi/connectivity.yaml#format" and f"{array.id}:{volume.name} " in s.devices[0]]
    assert len(steps) == 1 and steps[0].destructive and len(steps[0].automation) == 1, steps
    assert SUN in steps[0].devices[0] or wwn in steps[0].devices[0]
    return steps[0].automation[0].script


@pytest.fixture(scope="module")
def fakes(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("esxi-bin")
    for name, text in (("esxcli", FAKE_ESXCLI), ("partedUtil", FAKE_PARTEDUTIL), ("vmkfstools", FAKE_VMKFSTOOLS)):
        p = folder / name
        p.write_text(text)
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return folder


def _run(shell: str, script: str, fakes: Path, tmp_path: Path, *, devices: list[str],
         ptbl: str = "getptbl_unknown_blank_mpx.txt", extents: str = "vmfs_extent_list_two_datastores.txt",
         extents_fail: str = ""):
    listing = tmp_path / "devices.txt"
    listing.write_text("".join((CAPTURES / d).read_text() for d in devices))
    writes = tmp_path / "writes.txt"
    writes.write_text("")
    env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}", TB_CAP_DEVICES=str(listing),
               TB_CAP_EXTENTS=str(CAPTURES / extents), TB_CAP_PTBL=str(CAPTURES / ptbl),
               TB_CAP_USABLE=str(CAPTURES / "getusablesectors_gpt_oi_lun1.txt"), TB_WRITES=str(writes),
               TB_EXTENTS_FAIL=extents_fail)
    done = subprocess.run([shell, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    return done, writes.read_text().splitlines()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_datastore_is_made_on_the_one_device_named_by_the_volumes_wwn(shell, fakes, tmp_path):
    script = _script(array_model="Sun ZFS Storage 7120")     # a model with no SCSI vendor in families.yaml
    # a host that sees a local RAID disk, an SSD and the LUN (three recorded listings, one after the other)
    done, writes = _run(shell, script, fakes, tmp_path, devices=[
        "device_list_d_lsi_megaraid_local.txt", "device_list_macmini_t10_ssd_esxi55.txt",
        "device_list_d_sun_comstar_iscsi_esxi55.txt"])
    assert done.returncode == 0, done.stderr
    dev = f"/vmfs/devices/disks/{SUN}"
    assert writes == [f"partedUtil [mklabel] [{dev}] [gpt]",
                      f"partedUtil [setptbl] [{dev}] [gpt] [1 2048 272629726 AA31E02A400F11DB9590000C2911D1B8 0]",
                      f"vmkfstools [-C] [vmfs6] [-S] [vms] [{dev}:1]"]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("why, kwargs, run, said", [
    ("another WWN", {"wwn": "naa.600144f0876a9c47000052b74421000a"}, {},
     "no device on"),
    ("the wrong size", {"size_gb": 100}, {},
     "has 10240 MB; the volume has between"),
    ("another vendor", {"array_model": "IBM System Storage DS5020"}, {},
     "its vendor is not ^IBM$"),
    ("listed twice", {}, {"devices": ["device_list_d_sun_comstar_iscsi_esxi55.txt"] * 2},
     f"{SUN} is listed 2 times"),
    ("an MBR label", {}, {"ptbl": "getptbl_msdos_no_partitions_oi_lun1.txt"},
     "carries a msdos partition table"),
    ("a VMFS partition", {}, {"ptbl": "getptbl_gpt_vmfs_oi_lun1.txt"},
     "has 1 partition(s) in a gpt partition table"),
    # the host could not say which datastores it has: a device whose datastore was made without a
    # partition table by hand, or whose table partedUtil cannot read yet, would pass every other check
    ("no list of datastores", {}, {"extents_fail": "Error: Unable to get VMFS extents: hostd is not responding"},
     "esxcli storage vmfs extent list failed"),
])
def test_a_wrong_device_is_refused_and_nothing_is_written(shell, why, kwargs, run, said, fakes, tmp_path):
    kwargs = {"array_model": "Sun ZFS Storage 7120", **kwargs}
    run = {"devices": ["device_list_d_sun_comstar_iscsi_esxi55.txt"], **run}
    done, writes = _run(shell, _script(**kwargs), fakes, tmp_path, **run)
    assert done.returncode != 0, why
    assert "refused, nothing was written" in done.stderr and said in done.stderr, done.stderr
    assert writes == [], why


@pytest.mark.parametrize("shell", SHELLS)
def test_the_datastore_on_a_device_is_read_from_the_extent_list(shell, fakes, tmp_path):
    guard = _script(array_model="Sun ZFS Storage 7120").split("# --- end of guard", 1)[0]
    probe = guard + ("\nprintf '[%s]' \"$(tb_datastore_on naa.600a098038305674695d51694b427849)\""
                     " \"$(tb_datastore_on naa.600062b2049d040026fc1e4b2f305682)\" \"$(tb_datastore_on " + SUN + ")\"")
    done, _ = _run(shell, probe, fakes, tmp_path, devices=["device_list_d_sun_comstar_iscsi_esxi55.txt"])
    assert done.stdout == "[iscsi-datastore][datastore1][]", done.stderr


def test_a_volume_without_a_wwn_gets_a_manual_datastore_step():
    bed = with_identities(platform_bed(_case("esxi55"), "iscsi"), wwn=False)
    steps = [s for s in M.generate(bed).steps() if s.template == "esxi/connectivity.yaml#format"]
    assert steps and all(not s.automation for s in steps)
    assert all("selects a disk by its serial" in s.manual_reason for s in steps)


@pytest.mark.parametrize("shell", SHELLS)
def test_a_reused_datastore_is_checked_never_made(shell, fakes, tmp_path):
    """`reuse: true`: no datastore step; the kept-datastore step refuses a device that holds no extent of it."""
    bed = with_identities(platform_bed(_case("esxi80"), "fc"))
    array = bed.arrays[0]
    array.model = "Sun ZFS Storage 7120"
    volume = array.volumes[0]
    volume.wwn, volume.size_gb, volume.reuse, volume.label = SUN, 10, True, "iscsi-datastore"
    steps = [s for s in M.generate(bed).steps() if f"{array.id}:{volume.name} " in " ".join(s.devices)
             or s.template == "esxi/connectivity.yaml#mount-kept"]
    assert not [s for s in steps if s.destructive]
    kept = [s for s in steps if s.template == "esxi/connectivity.yaml#mount-kept" and "iscsi-datastore" in s.text]
    assert len(kept) == 1 and kept[0].automation
    done, writes = _run(shell, kept[0].automation[0].script, fakes, tmp_path,
                        devices=["device_list_d_sun_comstar_iscsi_esxi55.txt"])
    assert done.returncode != 0 and "holds no datastore, not the datastore iscsi-datastore" in done.stderr, done.stderr
    assert writes == []
    # a host that cannot list its datastores is told so, not "holds no datastore" or a silent exit
    done, writes = _run(shell, kept[0].automation[0].script, fakes, tmp_path,
                        devices=["device_list_d_sun_comstar_iscsi_esxi55.txt"], extents_fail="Error: hostd")
    assert done.returncode != 0 and "esxcli storage vmfs extent list failed" in done.stderr, done.stderr
    assert writes == []


def test_every_esxi_script_is_started_with_sh_which_esxi_has():
    """ESXi's shell is busybox sh: a task started with `bash -s` (the SSH transport's bash) could
    not start there, and the Ansible task would ask for /bin/bash."""
    from app.ansible.tasks import step_tasks
    from app.run.plan import run_steps
    bed = with_identities(platform_bed(_case("esxi80"), "fc"))
    steps = run_steps(M.generate(bed), {s.id: "ssh" for s in bed.servers})
    esxi = [(s, t) for s in steps for t in s.tasks if t.platform == "esxi"]
    assert len(esxi) >= 5 and {t.shell for _, t in esxi} == {"sh"}
    step, task = esxi[0]
    assert "/bin/bash" not in str(step_tasks(step, task, 0, False))
