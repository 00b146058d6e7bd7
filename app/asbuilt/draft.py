"""`testbed-studio import BED --from-hosts [INVENTORY]` and the designer's File › Draft Bed from
Lab… (widgets/draft_from_lab.py): read the hosts of an inventory (or the bed's own `access:`
entries) with the as-built check's read-only probes, then draft them into the bed -- hosts,
ports, addresses, the SAN volumes they see -- as one change (topology/importing/from_facts.py).
One code path for both presenters: `draft()` is blocking and Qt-free (the designer calls it on a
worker thread) and changes nothing; the caller shows the plan and applies its edit."""
from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.asbuilt.gather import Gathered, gather
from app.remote.base import HostKeyDecider, refuse_unknown_keys
from app.run.engine import DEFAULT_WORKERS
from topology.importing.plan import ImportPlan
from topology.model import Bed, HostAccess


@dataclass
class Draft:
    plan: ImportPlan
    gathered: Gathered | None = None
    hosts: list[str] = field(default_factory=list)       # the hosts read


def draft(bed: Bed, inventory: str | os.PathLike | None = None, *, fmt: str | None = None,
          decider: HostKeyDecider = refuse_unknown_keys, known_hosts: Path | None = None,
          ask_password: Callable[[HostAccess], str | None] | None = None,
          workers: int = DEFAULT_WORKERS) -> Draft:
    """What drafting the lab into `bed` would change; `bed` itself is not touched."""
    from app.remote.connect import TransportFactory
    from topology.importing import read_records
    from topology.importing.from_facts import plan_from_facts
    from topology.importing.plan import plan_records
    source = Path(inventory).name if inventory else "the bed's access entries"
    records: list = []
    reach = bed
    if inventory is not None:
        records, problems = read_records(inventory, fmt)
        if not problems and not records:
            from topology.errors import Problem
            problems = [Problem("the file names no host", "add at least one host")]
        if problems:
            return Draft(ImportPlan(str(inventory), problems=problems))
        # the hosts are reached as the inventory says, on a copy: the bed changes only by the plan
        reach = copy.deepcopy(bed)
        first = plan_records(reach, records, source)
        if first.problems:
            return Draft(first)
        if first.edit is not None:
            first.edit.apply()
        hosts = [r.host for r in records]
    else:
        hosts = [a.host for a in bed.access]
    if not hosts:
        from topology.errors import Problem
        return Draft(ImportPlan(source, problems=[Problem(
            "no host to read: the bed has no access entries", "give an inventory, or add access entries to the bed")]))
    for host in hosts:
        # a host the bed does not have yet is read as the platform its access says (a Linux or ESXi
        # host over SSH, Windows over WinRM): a server entry for the reader, on the copy only
        if not any(s.id == host for s in reach.servers):
            if reach is bed:
                reach = copy.deepcopy(bed)
            from topology.model import Server
            access = next(a for a in reach.access if a.host == host)
            reach.servers.append(Server(id=host, platform="windows" if access.transport == "winrm" else ""))
    factory = TransportFactory(reach, decider=decider, known_hosts=known_hosts, ask_password=ask_password)
    gathered = gather(reach, factory, hosts, workers=workers)
    plan = plan_from_facts(bed, gathered.facts, source, records)
    plan.notes.extend(f"skipped {text}" for text in gathered.skipped)
    return Draft(plan, gathered, hosts)


def asking(ask: Callable[[object], object]) -> tuple[HostKeyDecider, Callable[[HostAccess], str | None]]:
    """A host-key decider and a password source that put their questions to `ask` (the run
    controller's, answered on the GUI thread), as a run's session does: the designer's draft."""
    from app.remote.credentials import entry_name
    from app.run import events as E

    def decider(q) -> bool:
        return bool(ask(E.TrustHostKey(q.host, q.address, q.key_type, q.fingerprint)))

    def ask_password(access: HostAccess) -> str | None:
        answer = ask(E.PasswordNeeded(access.host, access.user, access.credential, entry_name(access)))
        return answer.password if isinstance(answer, E.PasswordAnswer) and answer.password else None
    return decider, ask_password
