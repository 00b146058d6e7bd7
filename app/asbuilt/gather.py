"""Reading the hosts: one read-only script per host (app/asbuilt/probes.py) over the transport the
run uses for it (local, SSH, WinRM: app/remote/), every host at once in the run engine's lanes,
and each answer read into facts (topology/asbuilt/facts.py).  A host that cannot be reached is a
fact too (`reached=False` with the reason); nothing here raises for one host's trouble.

Blocking and Qt-free: the command line calls it directly, the Run tab from a worker thread."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from app.asbuilt import esxi, linux, probes, windows
from app.remote.base import RemoteError, Transport
from app.run.engine import DEFAULT_WORKERS, Connections
from topology.asbuilt.facts import HostFacts
from topology.model import Bed, Server

READ_TIMEOUT_S = 120.0
READERS = {"linux": linux.read, "windows": windows.read, "esxi": esxi.read}


@dataclass
class Gathered:
    facts: dict[str, HostFacts] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)     # components with access that no reader serves, and why
    scripts: dict[str, tuple[str, str]] = field(default_factory=dict)   # host -> (shell, script) sent
    seconds: float = 0.0


def platform_of(server: Server, transport: str) -> str:
    if server.platform:
        return server.platform
    from topology.os_release import parse_os
    family = parse_os(server.os or "", server.hypervisor or "").family
    return family or ("windows" if transport == "winrm" else "linux")


def plan(bed: Bed, hosts: Iterable[str] | None = None) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """host -> (platform, shell, script) for each server with an access entry (or those named),
    and the components skipped with the reason."""
    from topology.os_release import parse_os
    wanted = set(hosts) if hosts is not None else None
    servers = {s.id: s for s in bed.servers}
    out: dict[str, tuple[str, str, str]] = {}
    skipped: list[str] = []
    for a in bed.access:
        if wanted is not None and a.host not in wanted:
            continue
        server = servers.get(a.host)
        if server is None:
            skipped.append(f"{a.host}: no read-only profile for switches, arrays or VMs yet: not checked")
            continue
        platform = platform_of(server, a.transport)
        version = parse_os(server.os or "", server.hypervisor or "", platform).version
        shell, script = probes.script_for(platform, version)
        out[a.host] = (platform, shell, script)
    if wanted is not None:
        skipped += [f"{h}: the bed has no access entry for it: not checked" for h in sorted(wanted - set(out))
                    if not any(s.startswith(h + ":") for s in skipped)]
    return out, skipped


def gather(bed: Bed, connect: Callable[[str], Transport], hosts: Iterable[str] | None = None, *,
           workers: int = DEFAULT_WORKERS, timeout: float = READ_TIMEOUT_S,
           on_host: Callable[[HostFacts], None] | None = None, connections: Connections | None = None) -> Gathered:
    """Reads every planned host at once; `on_host` is called (on a worker thread) as each ends.
    `connections`: an open run's (its pre-flight's, kept for its steps), used and left open; without
    it the check opens its own and closes them."""
    started = time.monotonic()
    todo, skipped = plan(bed, hosts)
    result = Gathered(skipped=skipped, scripts={h: (sh, sc) for h, (_, sh, sc) in todo.items()})
    own = connections is None
    connections = Connections(connect) if connections is None else connections

    def lane(host: str) -> HostFacts:
        platform, shell, script = todo[host]
        t0 = time.monotonic()
        facts = _read_host(connections, host, platform, shell, script, timeout)
        facts.seconds = round(time.monotonic() - t0, 3)
        if on_host is not None:
            on_host(facts)
        return facts

    try:
        if todo:
            with ThreadPoolExecutor(max_workers=min(max(1, workers), len(todo))) as pool:
                for facts in pool.map(lane, sorted(todo)):
                    result.facts[facts.host] = facts
    finally:
        if own:
            connections.close_all()
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _read_host(connections: Connections, host: str, platform: str, shell: str, script: str,
               timeout: float) -> HostFacts:
    lines: list[str] = []
    try:
        transport = connections.get(host)
        done = transport.run(script, shell=shell, timeout=timeout,
                             on_output=lambda stream, line: lines.append(str(line)) if stream == "stdout" else None)
    except RemoteError as exc:
        return HostFacts(host, platform, reached=False, error=str(exc))
    except OSError as exc:
        return HostFacts(host, platform, reached=False, error=f"{host}: {exc.strerror or exc}")
    if not done.ok and not lines:
        return HostFacts(host, platform, reached=False, error=f"{host}: the read ended {done.status}: {done.message}")
    facts = READERS[platform](host, probes.split_output(lines))
    if not done.ok:
        facts.notes.append(f"the read ended {done.status} ({done.message}): what came before is used")
    return facts
