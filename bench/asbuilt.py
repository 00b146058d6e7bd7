"""The as-built check's speed: holding facts against a 2,000-host bed (target under 0.5 s), and
reading 50 sandbox sshd hosts at once against reading one (targets: under 3 s wall, under 1.5x
one host).  `python -m bench.asbuilt [--repeat N] [--hosts 50] [--compare-only]`."""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path


def facts_from_bed(bed):
    """Facts that say what the bed says (every port present, up, at its address and MTU; every
    mapped volume seen by its WWN), so the comparison does all its work and finds nothing."""
    from topology.asbuilt import facts as F
    from topology.index import BedIndex
    from topology.path_checks import Masking
    masking = Masking(BedIndex(bed))
    volumes = {f"{a.id}:{v.name}": v for a in bed.arrays for v in a.volumes}
    out = {}
    for s in bed.servers:
        f = F.HostFacts(s.id, "linux")
        for ad in s.adapters:
            for p in ad.ports:
                addr = p.address if isinstance(p.address, str) and p.address else ""
                f.interfaces.append(F.Interface(p.label or p.name, up=True, state="UP",
                                                mtu=p.mtu if isinstance(p.mtu, int) else 1500,
                                                addresses=[addr] if addr else []))
        for ref in masking.presented.get(s.id, {}):
            wwn = f"6{list(volumes).index(ref):015x}{len(ref):016x}"
            volumes[ref].wwn = "naa." + wwn
            f.disks.append(F.Disk(f"sd{ref}", wwn=wwn))
        f.read = [F.INTERFACES, F.DISKS]
        out[s.id] = f
    return out


def time_compare(hosts: int, repeat: int) -> tuple[float, float, int, int]:
    from topology.asbuilt import check
    from topology.synthetic import generate
    bed = generate(hosts=hosts, vms=hosts * 10, arrays=max(1, hosts // 20), disks=hosts * 5)
    facts = facts_from_bed(bed)
    best = cpu = float("inf")
    result = None
    for _ in range(repeat):
        result = None
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        result = check(bed, facts)
        best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return best, cpu, len(result.rows), len(result.findings)


def time_gather(count: int, repeat: int) -> tuple[float, float]:
    """(seconds for one host, seconds for `count` hosts), best of `repeat`, connecting included."""
    import os

    from app.asbuilt.gather import gather
    from app.remote.connect import TransportFactory
    from bench.sandbox_hosts import SandboxLab
    from topology.fileformat import loads
    with tempfile.TemporaryDirectory() as tmp, SandboxLab(Path(tmp) / "lab") as lab:
        lab.start_many(count)
        os.environ["TESTBED_STUDIO_KNOWN_HOSTS"] = str(lab.known_hosts_path)
        names = sorted(lab.hosts, key=lambda n: int(n[1:]))
        text = "format_version: 1\nbed: {name: bench}\nservers:\n" + "".join(
            f"  - {{id: {n}, platform: linux}}\n" for n in names) + "access:\n" + "".join(
            f"  - {{host: {n}, transport: ssh, address: {lab.hosts[n].address}, port: {lab.hosts[n].port}, "
            f"user: root, key_file: {lab.client_key_path}}}\n" for n in names)
        bed = loads(text, "bench.yaml")
        factory = TransportFactory(bed, known_hosts=lab.known_hosts_path)
        one = many = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            got = gather(bed, factory, [names[0]])
            one = min(one, time.perf_counter() - t0)
            assert got.facts[names[0]].reached, got.facts[names[0]].error
            t0 = time.perf_counter()
            got = gather(bed, factory)
            many = min(many, time.perf_counter() - t0)
            bad = [f.error for f in got.facts.values() if not f.reached]
            assert not bad, bad[:3]
        return one, many


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.asbuilt")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--compare-only", action="store_true")
    ns = ap.parse_args(argv)
    seconds, cpu, rows, findings = time_compare(2000, ns.repeat)
    print(f"as-built comparison, 2,000-host bed: {seconds:.3f} s wall, {cpu:.3f} s CPU ({rows} facts compared, "
          f"{findings} findings); target 0.5 s: {seconds / 0.5:.2f} x target")
    if ns.compare_only:
        return 0
    from bench.sandbox_hosts import SandboxLab
    if SandboxLab.unavailable_reason():
        print(f"as-built gathering: skipped ({SandboxLab.unavailable_reason()})")
        return 0
    one, many = time_gather(ns.hosts, ns.repeat)
    print(f"as-built gathering over SSH: 1 host {one:.2f} s, {ns.hosts} hosts {many:.2f} s "
          f"(target 3 s: {many / 3:.2f} x target; {many / one:.2f} x one host, target 1.5 x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
