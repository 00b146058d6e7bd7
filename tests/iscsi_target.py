"""A real iSCSI target on loopback for the storage-safety tests: Debian's tgt (`tgtd`) with
file-backed LUNs, and each LUN's identity read over iSCSI the way a host's initiator reads it
(INQUIRY, VPD pages 0x80 and 0x83, READ CAPACITY) through libiscsi -- its `iscsi-inq` prints
binary designators (the NAA WWN) as raw bytes, so the pages are read through the library itself.

There is no kernel initiator here: a test gives each LUN's backing file a loop device as well
(the same bytes the target serves), and tells the guard script the LUN's identity through the
`udevadm` it calls (see `udev_shim`).
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def available() -> str:
    """'' when tgtd, libiscsi, losetup and root are here, else what is missing."""
    if os.geteuid() != 0:
        return "needs root (loop devices, tgtd)"
    for tool in ("tgtd", "tgtadm", "losetup", "mkfs.ext4", "unshare", "blkid"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return f"{tool} is not installed (apt-get install tgt util-linux e2fsprogs)"
    try:
        ctypes.CDLL("libiscsi.so.7")
    except OSError:
        return "libiscsi is not installed (apt-get install libiscsi-bin)"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lun:
    target: str        # IQN
    lun: int
    image: Path
    wwn: str = ""      # bare hex of the NAA designator (VPD 0x83)
    serial: str = ""   # VPD 0x80
    vendor: str = ""
    product: str = ""
    size: int = 0


class _Designator(ctypes.Structure):
    pass


_Designator._fields_ = [("next", ctypes.POINTER(_Designator)), ("protocol_identifier", ctypes.c_int),
                        ("code_set", ctypes.c_int), ("piv", ctypes.c_int), ("association", ctypes.c_int),
                        ("designator_type", ctypes.c_int), ("designator_length", ctypes.c_int),
                        ("designator", ctypes.POINTER(ctypes.c_ubyte))]


class _DeviceIdentification(ctypes.Structure):   # libiscsi's struct scsi_inquiry_device_identification
    _fields_ = [("qualifier", ctypes.c_int), ("device_type", ctypes.c_int), ("page_code", ctypes.c_int),
                ("designators", ctypes.POINTER(_Designator))]


class _UnitSerial(ctypes.Structure):             # struct scsi_inquiry_unit_serial_number
    _fields_ = [("qualifier", ctypes.c_int), ("device_type", ctypes.c_int), ("page_code", ctypes.c_int),
                ("usn", ctypes.c_char_p)]


def read_identity(portal: str, lun: Lun) -> Lun:
    """Fill in the LUN's WWN, serial, vendor, product and size as an initiator reads them."""
    lib = ctypes.CDLL("libiscsi.so.7")
    vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    lib.iscsi_create_context.restype = vp
    lib.iscsi_create_context.argtypes = [cp]
    lib.iscsi_set_targetname.argtypes = [vp, cp]
    lib.iscsi_set_session_type.argtypes = [vp, i]
    lib.iscsi_full_connect_sync.argtypes = [vp, cp, i]
    lib.iscsi_inquiry_sync.restype = vp
    lib.iscsi_inquiry_sync.argtypes = [vp, i, i, i, i]
    lib.scsi_datain_unmarshall.restype = vp
    lib.scsi_datain_unmarshall.argtypes = [vp]
    lib.scsi_free_scsi_task.argtypes = [vp]
    lib.iscsi_logout_sync.argtypes = [vp]
    lib.iscsi_destroy_context.argtypes = [vp]
    ctx = lib.iscsi_create_context(b"iqn.2026-01.org.testbed-studio:guard-test")
    try:
        lib.iscsi_set_targetname(ctx, lun.target.encode())
        lib.iscsi_set_session_type(ctx, 2)   # ISCSI_SESSION_NORMAL
        if lib.iscsi_full_connect_sync(ctx, portal.encode(), lun.lun) != 0:
            raise RuntimeError(f"cannot log in to {lun.target} at {portal}")
        tasks = []
        task = lib.iscsi_inquiry_sync(ctx, lun.lun, 1, 0x83, 255)
        tasks.append(task)
        ident = ctypes.cast(lib.scsi_datain_unmarshall(task), ctypes.POINTER(_DeviceIdentification)).contents
        d = ident.designators
        while d:
            e = d.contents
            if e.designator_type == 3 and e.association == 0 and not lun.wwn:     # NAA, of the LU
                lun.wwn = bytes(e.designator[:e.designator_length]).hex()
            d = e.next
        task = lib.iscsi_inquiry_sync(ctx, lun.lun, 1, 0x80, 255)
        tasks.append(task)
        usn = ctypes.cast(lib.scsi_datain_unmarshall(task), ctypes.POINTER(_UnitSerial)).contents
        lun.serial = (usn.usn or b"").decode().strip()
        task = lib.iscsi_inquiry_sync(ctx, lun.lun, 0, 0, 96)
        tasks.append(task)
        for task in tasks:
            lib.scsi_free_scsi_task(task)
        lib.iscsi_logout_sync(ctx)
    finally:
        lib.iscsi_destroy_context(ctx)
    # the standard INQUIRY's vendor and product, as iscsi-inq prints them
    out = subprocess.run(["iscsi-inq", f"iscsi://{portal}/{lun.target}/{lun.lun}"], capture_output=True,
                         text=True, timeout=20).stdout
    for line in out.splitlines():
        if line.startswith("Vendor:"):
            lun.vendor = line.split(":", 1)[1].strip()
        elif line.startswith("Product:"):
            lun.product = line.split(":", 1)[1].strip()
    lun.size = lun.image.stat().st_size
    return lun


class Target:
    """tgtd on 127.0.0.1 with its own control port; `add` makes a target's LUN from a file."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port()
        self.control = self.port % 9000 + 1000    # tgtd takes a small number here
        self.portal = f"127.0.0.1:{self.port}"
        self.tids: dict[str, int] = {}
        self.proc = subprocess.Popen(["tgtd", "-f", "--iscsi", f"portal={self.portal}", "--control-port",
                                      str(self.control)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        self.close()
        raise RuntimeError("tgtd did not start")

    def _adm(self, *args: str) -> None:
        subprocess.run(["tgtadm", "-C", str(self.control), "--lld", "iscsi", *args], check=True,
                       capture_output=True, timeout=20)

    def add(self, target: str, lun: int, size: int, name: str) -> Lun:
        image = self.folder / name
        with open(image, "wb") as f:
            f.truncate(size)
        if target not in self.tids:
            tid = self.tids[target] = len(self.tids) + 1
            self._adm("--op", "new", "--mode", "target", "--tid", str(tid), "-T", target)
            self._adm("--op", "bind", "--mode", "target", "--tid", str(tid), "-I", "ALL")
        self._adm("--op", "new", "--mode", "logicalunit", "--tid", str(self.tids[target]), "--lun", str(lun),
                  "-b", str(image))
        return read_identity(self.portal, Lun(target, lun, image))

    def close(self) -> None:
        # tgtd ignores SIGTERM while it has targets: stop it by its PID
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)


def udev_shim(folder: Path, identities: dict[str, dict[str, str]]) -> Path:
    """A `udevadm` for the guard script: for a loop device whose backing file is one of the test's
    LUN images it prints what udev's rules would read from that LUN over iSCSI (its WWN, serial,
    vendor, product and by-path name); for any other device, only its name.  Returns the folder to
    put first on PATH."""
    bindir = folder / "bin"
    bindir.mkdir(exist_ok=True)
    table = folder / "identities"
    table.write_text("".join(f"{image}\t" + "\t".join(f"{k}={v}" for k, v in props.items()) + "\n"
                             for image, props in identities.items()))
    shim = bindir / "udevadm"
    shim.write_text(f"""#!/bin/bash
# test stand-in for udevadm info --query=property --name=/dev/X (no udev runs here)
name=""
for a in "$@"; do case $a in --name=*) name=${{a#--name=}} ;; esac; done
dev=${{name##*/}}
echo "DEVNAME=$name"
backing=$(cat "/sys/class/block/$dev/loop/backing_file" 2>/dev/null || true)
[ -n "$backing" ] || exit 0
while IFS=$'\\t' read -r image props; do
    if [ "$image" = "$backing" ]; then tr '\\t' '\\n' <<< "$props"; fi
done < {table}
""")
    shim.chmod(0o755)
    return bindir


def identity_props(portal: str, lun: Lun) -> dict[str, str]:
    """What udev's 60-persistent-storage rules give a LUN reached over iSCSI."""
    return {"ID_WWN": f"0x{lun.wwn[:16]}", "ID_WWN_WITH_EXTENSION": f"0x{lun.wwn}", "ID_SERIAL": f"3{lun.wwn}",
            "ID_SCSI_SERIAL": lun.serial, "ID_VENDOR": lun.vendor, "ID_MODEL": lun.product,
            "ID_PATH": f"ip-{portal}-iscsi-{lun.target}-lun-{lun.lun}"}
