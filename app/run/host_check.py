"""Test the connection to one host, as a run would reach it: the Access form's "Test connection".

The same code path as a run's pre-flight (`app.run.engine.check_host` over the transports the
run session builds with `TransportFactory`), narrowed to one host: connect with the access entry,
log in with the keyring's password, look for the programs that host's steps call.  It changes
nothing on the host and writes no run.  An SSH host key not yet known is refused unless its
fingerprint is among `trusted` (the form shows the fingerprint and asks first, as `run --trust`
does); a key accepted that way is kept in the application's known_hosts, as a run keeps it.

Called on a worker: no Qt here.  Passwords go to the system keyring only (`store_password`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.run.engine import Connections, HostCheck, check_host, step_needs
from app.run.plan import run_steps


@dataclass(frozen=True)
class ConnectionTest:
    check: HostCheck
    unknown_key: str = ""        # the fingerprint of an SSH host key not yet trusted ('' = none)
    key_type: str = ""
    address: str = ""


def test_connection(bed: Any, host: str, *, configuration: str | None = None, trusted: Iterable[str] = (),
                    credentials: Any = None, known_hosts: Path | None = None) -> ConnectionTest:
    """Pre-flight of `host` alone (see the module's docstring)."""
    from app.remote.connect import TransportFactory
    from app.remote.credentials import CredentialStore
    from app.run.session import bed_to_run
    from topology.methodology import generate

    run_bed = bed_to_run(bed, configuration)
    if not any(a.host == host for a in run_bed.access):
        return ConnectionTest(HostCheck(host, False, f"{host} has no access entry: choose how a run reaches it"))
    allowed = set(trusted)
    asked: list[Any] = []

    def decide(question: Any) -> bool:
        asked.append(question)
        return question.fingerprint in allowed

    factory = TransportFactory(run_bed, credentials or CredentialStore(), decider=decide, known_hosts=known_hosts)
    steps = [s for s in run_steps(generate(run_bed), factory.transports()) if host in s.hosts]
    connections = Connections(factory)
    try:
        result = check_host(connections, host, step_needs(steps).get(host, []))
    finally:
        connections.close_all()
    refused = next((q for q in asked if q.fingerprint not in allowed), None)
    if refused is not None and not result.ok:
        return ConnectionTest(result, refused.fingerprint, getattr(refused, "key_type", ""),
                              getattr(refused, "address", ""))
    return ConnectionTest(result)


def store_password(access: Any, password: str) -> bool:
    """Keep a host's password in the system keyring under its entry (the host id or its shared
    `credential`), as `testbed-studio credentials set` does; never in the bed's file."""
    from app.remote.credentials import CredentialStore, entry_name
    return CredentialStore().set(entry_name(access), password)


def password_entry(access: Any) -> str:
    from app.remote.credentials import entry_name
    return entry_name(access)
