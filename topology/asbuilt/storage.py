"""The storage half of the as-built check: each LUN the masking maps to a host, found among the
disks the host lists by the identity the bed states (WWN, serial, or target and LUN, as the
guarded storage steps select it: topology/volume_identity.py); LUNs a host sees that are mapped
elsewhere; the iSCSI sessions and multipath paths against the paths the drawing gives
(topology/derived_paths.py).  A volume found by its target and LUN whose WWN or serial the bed
does not state is learnt: the storage steps can then select its disk by that identity."""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

from topology.asbuilt import codes as C
from topology.asbuilt.facts import DISKS, MULTIPATH, SESSIONS, Disk, HostFacts
from topology.asbuilt.result import AsBuilt, Learnt, Row
from topology.index import BedIndex
from topology.model import Bed
from topology.unknown import stated
from topology.volume_identity import normal_target, normal_wwn, size_bounds, wwn_name


def check_storage(out: AsBuilt, bed: Bed, facts: dict[str, HostFacts]) -> None:
    if not bed.arrays or not any(f.has(DISKS) or f.has(SESSIONS) for f in facts.values()):
        return
    from topology.path_checks import Masking
    idx = BedIndex(bed)
    masking = Masking(idx)
    volumes = {f"{a.id}:{v.name}": v for a in bed.arrays for v in a.volumes}
    wwns = {ref: normal_wwn(stated(v.wwn)) for ref, v in volumes.items()}     # once per volume, not per host
    by_wwn = {w: ref for ref, w in wwns.items() if w}
    paths = _paths(idx, facts) if any(f.has(SESSIONS) or f.has(MULTIPATH) for f in facts.values()) else []
    for host, f in facts.items():
        presented = masking.presented.get(host, {})
        found = _luns(out, host, f, presented, volumes, wwns, idx) if f.has(DISKS) or f.has(SESSIONS) else {}
        if f.has(DISKS):
            _unexpected(out, host, f, presented, by_wwn)
        host_paths = [p for p in paths if p.spec.host == host]
        if f.has(SESSIONS):
            _sessions(out, host, f, host_paths, idx)
        elif any(p.spec.kind == "iscsi" for p in host_paths):
            out.add(C.NOT_READ, [host], f"{host}: its iSCSI sessions could not be read, so the "
                                        f"{sum(p.spec.kind == 'iscsi' for p in host_paths)} the drawing gives are "
                                        "not checked")
        if f.has(MULTIPATH):
            _multipath(out, host, f, host_paths, found)


def _paths(idx: BedIndex, facts: dict[str, HostFacts]) -> list:
    from topology.derived_paths import PathDerivation
    return [p for p in PathDerivation(idx).paths if p.spec.host in facts]


def _address(idx: BedIndex, ref: str) -> str:
    pr = idx.port(ref)
    text = stated(getattr(pr.port, "address", "")) if pr is not None else ""
    return text.split("/")[0].strip() if isinstance(text, str) else ""


# ------------------------------------------------------------------ LUNs

def _luns(out: AsBuilt, host: str, f: HostFacts, presented: dict, volumes: dict, wwns: dict[str, str],
          idx: BedIndex) -> dict[str, Disk]:
    """Each mapped volume's disk on the host (ref -> Disk), with the findings and learnt values."""
    disks = {d.name: d for d in f.disks}
    by_wwn = {d.wwn: d for d in reversed(f.disks) if d.wwn}
    found: dict[str, Disk] = {}
    for ref, pres in sorted(presented.items()):
        vol = volumes.get(ref)
        if vol is None:
            continue
        wwn, serial = wwns[ref], stated(vol.serial)
        serial = serial.strip() if isinstance(serial, str) else ""
        target = normal_target(stated(vol.target))
        disk, how = None, ""
        if wwn:
            disk = by_wwn.get(wwn) or \
                next((Disk(m.name or m.wwid, wwn=m.wwid) for m in f.multipath if m.wwid == wwn), None)
            how = f"WWN {_wwn_name(vol.wwn)}"
        elif serial:
            disk = next((d for d in f.disks if d.serial.strip() == serial), None)
            how = f"serial {serial}"
        at_lun = _at_lun(f, disks, pres, target, idx)
        # found by its LUN number on the array's portals, with no target stated: an identity for the check's row,
        # never one to learn (an EqualLogic group shows every volume as LUN 0 of its own target)
        by_number = False
        if disk is None and not wwn and not serial and at_lun is not None:
            disk, how = at_lun, (f"LUN {pres.lun} of target {target}" if target else f"LUN {pres.lun} of {pres.array}")
            by_number = not target
        expected = how or f"LUN {pres.lun} (the bed states no WWN, serial or target)"
        if disk is None:
            if how and f.has(DISKS):
                out.add(C.LUN_MISSING, [ref, host], f"{host}: no disk with {how}: {ref} is mapped to it as LUN "
                                                    f"{pres.lun} (bed: {pres.array} mappings)")
                out.rows.append(Row(host, f"LUN {ref}", expected, "not found", C.LUN_MISSING.code))
            elif not how:
                out.add(C.NOT_READ, [ref, host], f"{host}: {ref} (LUN {pres.lun}) could not be looked for: the bed "
                                                 "states no WWN, serial or target for it, and no session shows the LUN")
            continue
        found[ref] = disk
        problems = _differs(vol, disk, at_lun, wwn)
        for text in problems:
            out.add(C.VOLUME_DIFFERS, [ref, host], f"{host}: {ref} {text} (bed: {ref})")
        out.rows.append(Row(host, f"LUN {ref}", expected, _disk_text(disk),
                             C.VOLUME_DIFFERS.code if problems else ""))
        source = f"{host}: {disk.name}"
        if by_number:
            continue
        if not wwn and disk.wwn:
            out.learnt.append(Learnt(ref, "wwn", "naa." + disk.wwn, source))
        if not serial and disk.serial:
            out.learnt.append(Learnt(ref, "serial", disk.serial.strip(), source))
        if not target:
            named = _target_of(f, disk.name)
            if named:
                out.learnt.append(Learnt(ref, "target", named, source))
    return found


def _at_lun(f: HostFacts, disks: dict[str, Disk], pres, target: str, idx: BedIndex) -> Disk | None:
    """The disk the host's sessions show at the mapping's LUN: on the volume's target when the bed
    names it, else on a session to one of the array's portals; None when none or several differ."""
    if pres.lun is None or not f.sessions:
        return None
    portals = {_address(idx, f"{pres.array}:{p.name}") for p in _array_ports(idx, pres.array)}
    names = set()
    for s in f.sessions:
        if (target and s.target.lower() == target) or (not target and s.portal in portals):
            names |= {d.disk for d in s.disks if d.lun == pres.lun}
    picked = {disks[n].wwn or n for n in names if n in disks}
    if len(picked) != 1:
        return None
    return next(disks[n] for n in sorted(names) if n in disks)


def _array_ports(idx: BedIndex, array_id: str) -> list:
    array = next((a for a in idx.bed.arrays if a.id == array_id), None)
    return [p for c in array.controllers for p in c.ports] if array is not None else []


def _target_of(f: HostFacts, disk: str) -> str:
    return next((s.target for s in f.sessions for d in s.disks if d.disk == disk), "")


def _differs(vol, disk: Disk, at_lun: Disk | None, wwn: str) -> list[str]:
    out = []
    if wwn and at_lun is not None and at_lun.wwn and at_lun.wwn != wwn:
        out.append(f"is at its LUN as WWN {wwn_name('naa.' + at_lun.wwn)}, the bed says {wwn_name(vol.wwn)}")
    bounds = size_bounds(vol.size_gb)
    if bounds and disk.size_bytes and not bounds[0] <= disk.size_bytes <= bounds[1]:
        out.append(f"has {disk.size_bytes} bytes on {disk.name}, the bed says {stated(vol.size_gb):g} GB")
    return out


# a bed's and a host's WWNs are spelt once per check, not once per row that names them
_wwn_name = lru_cache(maxsize=1 << 16)(wwn_name)


def _disk_text(d: Disk) -> str:
    bits = [d.name] + ([_wwn_name("naa." + d.wwn)] if d.wwn else []) + \
        ([f"{d.size_bytes / 1e9:.3g} GB"] if d.size_bytes else [])
    return ", ".join(bits)


def _unexpected(out: AsBuilt, host: str, f: HostFacts, presented: dict, by_wwn: dict[str, str]) -> None:
    seen = {d.wwn: d.name for d in f.disks if d.wwn} | {m.wwid: m.name for m in f.multipath if m.wwid}
    for wwn, name in sorted(seen.items()):
        ref = by_wwn.get(wwn)
        if ref is not None and ref not in presented:
            out.add(C.LUN_UNEXPECTED, [ref, host], f"{host}: sees {ref} ({name}, WWN {wwn_name('naa.' + wwn)}); the "
                                                   "array's masking does not map it to this host")
            out.rows.append(Row(host, f"LUN {ref}", "not mapped", name, C.LUN_UNEXPECTED.code))


# ------------------------------------------------------------------ sessions and multipath

def _sessions(out: AsBuilt, host: str, f: HostFacts, paths: list, idx: BedIndex) -> None:
    expected: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)    # array -> (from, to) -> words
    for p in paths:
        if p.spec.kind != "iscsi":
            continue
        tgt = idx.port(p.spec.target)
        if tgt is None:
            continue
        pair = (_address(idx, p.spec.initiator), _address(idx, p.spec.target))
        expected[tgt.device.id][pair] = f"{p.spec.initiator} ({pair[0] or 'no address'}) to {p.spec.target} " \
                                        f"({pair[1] or 'no address'})"
    for array_id, pairs in sorted(expected.items()):
        portals = {b for _, b in pairs} | {_address(idx, f"{array_id}:{p.name}") for p in _array_ports(idx, array_id)}
        seen = {(s.initiator_address, s.portal) for s in f.sessions if s.portal in portals}
        by_portal = any(not a for a, _ in seen)       # the OS did not say where a session leaves from
        if by_portal:
            have = {b for _, b in seen}
            missing = [w for (a, b), w in pairs.items() if b not in have]
            n_seen = len(have)
        else:
            missing = [w for pair, w in pairs.items() if pair not in seen]
            n_seen = len(seen)
        extra = [] if by_portal else sorted(f"{a} to {b}" for a, b in seen - set(pairs))
        words = f"{n_seen} iSCSI session path(s) to {array_id} where the drawing gives {len(pairs)}"
        if missing:
            out.add(C.SESSIONS, [host, array_id], f"{host}: {words}: none from " + "; none from ".join(missing))
        elif extra:
            out.add(C.SESSIONS, [host, array_id], f"{host}: {words}: also {', '.join(extra)}", severity="warning")
        out.rows.append(Row(host, f"iSCSI sessions to {array_id}", str(len(pairs)), str(n_seen),
                             C.SESSIONS.code if missing or extra else ""))


def _multipath(out: AsBuilt, host: str, f: HostFacts, paths: list, found: dict[str, Disk]) -> None:
    per_volume: dict[str, set] = defaultdict(set)
    for p in paths:
        for vol in p.spec.volumes or p.luns:
            per_volume[vol].add((p.spec.initiator, p.spec.target))
    maps = {m.wwid: m for m in f.multipath}
    for ref, disk in sorted(found.items()):
        want = len(per_volume.get(ref, ()))
        if want < 2 or not disk.wwn:
            continue
        m = maps.get(disk.wwn)
        have = m.active if m is not None else 0
        code = "" if have >= want else C.MULTIPATH.code
        if code:
            seen = f"{have} active path(s) in {m.name or m.wwid}" if m is not None else "no multipath device"
            out.add(C.MULTIPATH, [ref, host], f"{host}: {ref}: {seen}, the drawing gives {want} paths")
        out.rows.append(Row(host, f"paths to {ref}", str(want), str(have), code))
