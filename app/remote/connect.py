"""Builds the transport for a host from the bed's access entries."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from app.remote.base import HostKeyDecider, RemoteError, Transport, refuse_unknown_keys
from app.remote.credentials import CredentialStore, entry_name
from topology.model import Bed, HostAccess

_JUMP = re.compile(r"^(?:(?P<user>[^@]+)@)?(?P<host>\[[^\]]+\]|[^:]+)(?::(?P<port>\d+))?$")


def known_hosts_path() -> Path:
    """The application's own known_hosts (never ~/.ssh/known_hosts: the app only adds keys
    the user accepted in it)."""
    import os
    override = os.environ.get("TESTBED_STUDIO_KNOWN_HOSTS")
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_config_dir("testbed-studio")) / "known_hosts"


def access_by_host(bed: Bed) -> dict[str, HostAccess]:
    return {a.host: a for a in bed.access}


def address_of(bed: Bed, access: HostAccess) -> str:
    if access.address:
        return access.address
    for s in bed.servers:
        if s.id == access.host and s.management_address:
            return s.management_address.split("/")[0]
    return access.host


def describe(access: HostAccess, bed: Bed) -> str:
    addr = address_of(bed, access)
    if access.transport == "local":
        return "this machine"
    if access.transport == "winrm":
        port = access.port or (5986 if access.winrm_scheme == "https" else 5985)
        return f"WinRM {access.winrm_scheme}://{addr}:{port} ({access.winrm_auth})"
    user = f"{access.user}@" if access.user else ""
    return f"SSH {user}{addr}:{access.port or 22}" + (f" via {access.jump}" if access.jump else "")


class TransportFactory:
    """`factory(host_id) -> Transport` (not yet opened) for the run engine."""

    def __init__(self, bed: Bed, credentials: CredentialStore | None = None,
                 decider: HostKeyDecider = refuse_unknown_keys, known_hosts: Path | None = None,
                 ask_password: Callable[[HostAccess], str | None] | None = None):
        self.bed = bed
        self.access = access_by_host(bed)
        self.credentials = credentials or CredentialStore()
        self.decider = decider
        self.known_hosts = known_hosts or known_hosts_path()
        self.ask_password = ask_password

    def transports(self) -> dict[str, str]:
        return {h: a.transport for h, a in self.access.items()}

    def timeouts(self) -> dict[str, float]:
        return {h: a.timeout_s for h, a in self.access.items() if a.timeout_s}

    def describe(self, host: str) -> str:
        a = self.access.get(host)
        return describe(a, self.bed) if a else "no remote access"

    def _password(self, access: HostAccess, required: bool) -> str | None:
        entry = entry_name(access)
        pw = self.credentials.get(entry)
        if pw is None and required and self.ask_password is not None:
            pw = self.ask_password(access)
        return pw

    def __call__(self, host: str) -> Transport:
        access = self.access.get(host)
        if access is None:
            raise RemoteError(f"{host}: the bed has no remote access entry for this host "
                              "(add one under 'access:' with its address and transport)")
        if access.transport == "local":
            from app.remote.local import LocalTransport
            return LocalTransport(host)
        if access.transport == "winrm":
            from app.remote.winrm import WinRMTransport
            password = self._password(access, required=True)
            if password is None:
                raise RemoteError(f"{host}: no password for {access.user or '(no user)'} in the keyring "
                                  f"(entry {entry_name(access)!r}); store it with `testbed-studio credentials "
                                  f"set {entry_name(access)}`, or run from a terminal (it asks), or enter it "
                                  "in the run wizard")
            return WinRMTransport(host, address_of(self.bed, access), port=access.port,
                                  scheme=access.winrm_scheme, auth=access.winrm_auth, user=access.user,
                                  password=password, verify_tls=access.verify_tls,
                                  ca_file=access.ca_file or None)
        return self._ssh(access)

    def _ssh(self, access: HostAccess, depth: int = 0):
        from app.remote.ssh import SSHTransport
        if depth > 3:
            raise RemoteError(f"{access.host}: jump hosts form a loop")
        jump = None
        if access.jump:
            if access.jump in self.access:
                jump = self._ssh(self.access[access.jump], depth + 1)
            else:
                m = _JUMP.match(access.jump)
                if not m:
                    raise RemoteError(f"{access.host}: jump {access.jump!r} is neither a host id of the bed "
                                      "nor user@host:port")
                jump = SSHTransport(access.jump, m.group("host").strip("[]"), port=int(m.group("port") or 22),
                                    user=m.group("user") or access.user, key_file=access.key_file or None,
                                    known_hosts=self.known_hosts, decider=self.decider)
        return SSHTransport(access.host, address_of(self.bed, access), port=access.port or 22,
                            user=access.user or "root", password=self._password(access, required=False),
                            key_file=access.key_file or None, known_hosts=self.known_hosts,
                            decider=self.decider, jump=jump)
