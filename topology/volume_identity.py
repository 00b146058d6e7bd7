"""How a host tells one volume (LUN) from every other disk it sees.

A step that writes to a block device selects its device at run time by what the bed states
about the volume, best first:

* `wwn` -- the LUN's unique id from SCSI VPD page 0x83 (NAA or EUI-64).  Linux shows it as
  /dev/disk/by-id/wwn-0x<hex> (udev ID_WWN_WITH_EXTENSION) and as the multipath WWID 3<hex>,
  Windows Server 2012 and later as Get-Disk's UniqueId, ESXi as the device naa.<hex>;
* `serial` -- the unit serial number (VPD page 0x80): udev ID_SCSI_SERIAL, Get-Disk and
  Win32_DiskDrive SerialNumber (the one identity Windows Server 2008 R2 shows);
* `target` -- the iSCSI target name or FC target WWPN the volume is presented on, with the LUN
  the bed states for the owner's mapping (the path udev names in ID_PATH).

A LUN number alone never names a disk: a server's own RAID volume is LUN 0 too, and an
EqualLogic group presents every volume as LUN 0 of its own target.  Nothing here guesses: a
volume for which the bed states none of these is formatted by hand.
"""
from __future__ import annotations

import re
from typing import Any

from topology.unknown import NOT_STATED, stated

_HEX = re.compile(r"[0-9a-f]+")

# a device's size may differ from the volume's stated size: arrays count GB as 10^9 or 2^30 bytes
# and round to their own extents; outside this band it is another volume
SIZE_LOW, SIZE_HIGH = 0.95, 1.05
TOLERANCE_TEXT = "5 % below the size in 10^9-byte GB to 5 % above it in 2^30-byte GiB"


def normal_wwn(text: object) -> str:
    """'naa.600A0B80...' / '0x600a...' / 'eui.0025...' -> bare lowercase hex ('' for anything else)."""
    if not isinstance(text, str) or text is NOT_STATED:
        return ""
    t = text.strip().lower()
    for prefix in ("naa.", "eui.", "0x"):
        if t.startswith(prefix):
            t = t[len(prefix):]
            break
    return t if len(t) in (16, 24, 32) and _HEX.fullmatch(t) else ""


def wwn_name(text: object) -> str:
    """The id as ESXi and most array GUIs print it: naa.<hex> or eui.<hex>."""
    hexid = normal_wwn(text)
    if not hexid:
        return ""
    return ("eui." if isinstance(text, str) and text.strip().lower().startswith("eui.") else "naa.") + hexid


def normal_target(text: object) -> str:
    """An iSCSI name as written (lower case), or an FC WWPN as 16 hex digits; '' when it is neither."""
    if not isinstance(text, str) or text is NOT_STATED:
        return ""
    t = text.strip().lower()
    if t.startswith(("iqn.", "eui.", "naa.")) and re.fullmatch(r"[a-z0-9.:_-]+", t):
        return t
    wwpn = t.replace(":", "").removeprefix("0x")
    return wwpn if len(wwpn) == 16 and _HEX.fullmatch(wwpn) else ""


def size_bounds(size_gb: object) -> tuple[int, int] | None:
    """(fewest, most) bytes a device may have to be the volume; None when the size is not stated."""
    gb = stated(size_gb)
    if not isinstance(gb, (int, float)) or isinstance(gb, bool) or gb <= 0:
        return None
    return int(gb * 1e9 * SIZE_LOW), int(gb * 2**30 * SIZE_HIGH)


def select_by(volume: Any, lun: int | None, shows_wwn: bool = True) -> str:
    """Which stated identity a step selects the volume's device by: wwn, serial, target, or ''.
    `shows_wwn` is False for a machine that cannot see a LUN's WWN (Windows Server 2008 and 2008 R2:
    Win32_DiskDrive has none), which selects by the serial or the target and LUN instead."""
    if shows_wwn and normal_wwn(getattr(volume, "wwn", "")):
        return "wwn"
    serial = getattr(volume, "serial", "")
    if isinstance(serial, str) and serial is not NOT_STATED and serial.strip():
        return "serial"
    if normal_target(getattr(volume, "target", "")) and lun is not None:
        return "target"
    return ""


def identity_text(volume: Any, lun: int | None, shows_wwn: bool = True) -> str:
    """The stated identity in words: 'WWN naa.600a...', 'serial SV1234', 'LUN 3 of target iqn...'."""
    how = select_by(volume, lun, shows_wwn)
    if how == "wwn":
        return f"WWN {wwn_name(volume.wwn)}"
    if how == "serial":
        return f"serial {str(volume.serial).strip()}"
    if how == "target":
        return f"LUN {lun} of target {str(volume.target).strip()}"
    return ""
