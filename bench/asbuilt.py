"""The as-built check's speed: holding facts against a 2,000-host bed (target under 0.5 s), and
reading 50 sandbox sshd hosts at once against reading one (targets: under 3 s wall, under 1.5x
one host), connecting first and over open connections, with the CPU the check and the hosts
spent (the sandbox hosts share this machine's cores; a lab's do not).
`python -m bench.asbuilt [--repeat N] [--hosts 50] [--compare-only]`."""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
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


def time_compare(hosts: int, repeat: int) -> tuple[list[float], list[float], int, int]:
    """Wall and CPU seconds of each of `repeat` comparisons, the rows compared and the findings."""
    from topology.asbuilt import check
    from topology.synthetic import generate
    bed = generate(hosts=hosts, vms=hosts * 10, arrays=max(1, hosts // 20), disks=hosts * 5)
    facts = facts_from_bed(bed)
    walls, cpus = [], []
    result = check(bed, facts)      # warm: the lookup tables' caches
    for _ in range(repeat):
        result = None
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        result = check(bed, facts)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, len(result.rows), len(result.findings)


_TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children, the ended ones included (a sandbox host's sshd:
    the sessions it has reaped, and the probes they ran)."""
    total = 0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = sum(int(x) for x in fields[11:15])
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                total += round(_tree_cpu(int(child)) * _TICK)
    except (OSError, ValueError):
        pass
    return total / _TICK


@dataclass
class Reading:
    wall: float         # seconds
    client: float       # CPU seconds of this process (the check)
    hosts: float        # CPU seconds of the sandbox hosts (sshd, the sessions, the probes)


def _measured(lab, names, work) -> Reading:
    pids = [lab.hosts[n].process.pid for n in names]
    h0, c0, t0 = sum(map(_tree_cpu, pids)), time.process_time(), time.perf_counter()
    work()
    wall, client = time.perf_counter() - t0, time.process_time() - c0
    time.sleep(0.3)     # the sessions end and are reaped: their CPU reaches the host's sshd
    return Reading(wall, client, sum(map(_tree_cpu, pids)) - h0)


def time_gather(count: int, repeat: int) -> dict[str, list[Reading]]:
    """Paired readings, `repeat` times: one host, then `count` hosts, each connecting first (a check on
    its own); then the same over connections already open (a check inside a run, whose pre-flight
    connected: what bench/run.py times for a step)."""
    from app.asbuilt.gather import gather
    from app.remote.connect import TransportFactory
    from app.run.engine import Connections
    from bench.sandbox_hosts import SandboxLab
    from topology.fileformat import loads
    out: dict[str, list[Reading]] = {"one": [], "many": [], "one-open": [], "many-open": []}
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

        def read(hosts, connections=None):
            got = gather(bed, factory, hosts, connections=connections)
            bad = [f.error for f in got.facts.values() if not f.reached]
            assert not bad and len(got.facts) == len(hosts), bad[:3]

        read(names[:1])     # warm: imports, the known_hosts file read once
        for _ in range(repeat):
            out["one"].append(_measured(lab, names[:1], lambda: read(names[:1])))
            out["many"].append(_measured(lab, names, lambda: read(names)))
            for key, hosts in (("one-open", names[:1]), ("many-open", names)):
                connections = Connections(factory)
                for h in hosts:
                    connections.get(h)
                try:
                    out[key].append(_measured(lab, hosts, lambda hs=hosts, c=connections: read(hs, c)))
                finally:
                    connections.close_all()
    return out


def _median(readings: list[Reading], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in readings)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.asbuilt")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--compare-only", action="store_true")
    ns = ap.parse_args(argv)
    walls, cpus, rows, findings = time_compare(2000, ns.repeat)
    wall = statistics.median(walls)
    print(f"as-built comparison, 2,000-host bed ({rows} facts compared, {findings} findings), {ns.repeat} runs: "
          f"median {wall:.3f} s wall (best {min(walls):.3f}), {statistics.median(cpus):.3f} s CPU "
          f"(best {min(cpus):.3f}); target 0.5 s: {wall / 0.5:.2f} x target")
    if ns.compare_only:
        return 0
    from bench.sandbox_hosts import SandboxLab
    if SandboxLab.unavailable_reason():
        print(f"as-built gathering: skipped ({SandboxLab.unavailable_reason()})")
        return 0
    got = time_gather(ns.hosts, ns.repeat)
    cores = os.cpu_count() or 1
    for label, one, many in (("connecting first (a check on its own)", got["one"], got["many"]),
                             ("over open connections (a check in a run, as bench/run.py times a step)",
                              got["one-open"], got["many-open"])):
        w1, wn = _median(one, "wall"), _median(many, "wall")
        cpu = _median(many, "client") + _median(many, "hosts")
        print(f"as-built gathering over SSH, {label}, median of {ns.repeat} paired runs:")
        print(f"  1 host {w1:.2f} s; {ns.hosts} hosts {wn:.2f} s (target 3 s: {wn / 3:.2f} x target; "
              f"{wn / w1:.2f} x one host, target 1.5 x)")
        print(f"  CPU for {ns.hosts} hosts: the check {_median(many, 'client'):.2f} s, the sandbox hosts "
              f"{_median(many, 'hosts'):.2f} s: {cpu:.2f} s on {cores} cores here, at least {cpu / cores:.2f} s of "
              f"wall ({cpu / cores / w1:.1f} x one host) before any waiting; a lab's hosts each have their own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
