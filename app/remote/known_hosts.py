"""The application's known_hosts file, read once per version of the file and shared by every SSH
connection: reading 50 hosts at once read and parsed the whole file 100 times over (our own check,
then paramiko's `load_host_keys`, which looks every entry up against every other), and that was
most of the client's CPU in a check of 50 sandbox hosts (bench/asbuilt.py).

The checks are the ones the transport always made: every line must be one paramiko understands
(it skips what it cannot parse and has no notion of @revoked, so a key the user revoked would
otherwise be trusted again).  A new line (a key the user accepted) changes the file's size and
time, and the next connection reads it again."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import paramiko

from app.remote.base import HostKeyRejected

_lock = threading.Lock()
_read: dict[str, tuple[tuple[int, int, int], list[paramiko.hostkeys.HostKeyEntry]]] = {}


def _entries(path: Path, host: str) -> list[paramiko.hostkeys.HostKeyEntry]:
    """Every entry of the file, checked; HostKeyRejected naming the line that cannot be honoured."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise HostKeyRejected(f"{host}: cannot read {path}: {exc.strerror or exc}") from None
    version = (st.st_mtime_ns, st.st_size, st.st_ino)
    key = str(path)
    with _lock:
        cached = _read.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
    entries = _parse(path, host)
    with _lock:
        _read[key] = (version, entries)
    return entries


def _parse(path: Path, host: str) -> list[paramiko.hostkeys.HostKeyEntry]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise HostKeyRejected(f"{host}: cannot read {path}: {exc.strerror or exc}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{path}:{number}"
        if stripped.startswith("@"):
            marker = stripped.split()[0]
            raise HostKeyRejected(
                f"{host}: {where}: a {marker} line, which this application cannot honour (a revoked "
                "key would be trusted again); nothing was run. Remove the line, and the key it names, "
                "from this file (it is the application's own, not ~/.ssh/known_hosts)")
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(stripped, number)
        except Exception as exc:
            entry, why = None, str(exc.args[-1] if isinstance(exc, paramiko.hostkeys.InvalidHostKey)
                                   and exc.args else exc)
        else:
            why = "not 'HOSTS KEYTYPE BASE64-KEY'"
        if entry is None:
            raise HostKeyRejected(f"{host}: {where}: a damaged line ({why}); nothing was run. Fix or "
                                  "remove that line, then accept the host's key again")
        out.append(entry)
    return out


def _names(entry: paramiko.hostkeys.HostKeyEntry, name: str) -> bool:
    for h in entry.hostnames:
        if h == name or h.startswith("|1|") and paramiko.HostKeys.hash_host(name, h) == h:
            return True
    return False


def trust(client: paramiko.SSHClient, path: Path, name: str, host: str) -> None:
    """Gives `client` the keys the file trusts for `name` ('addr' or '[addr]:port', as paramiko
    looks it up), and only those; raises HostKeyRejected for a file that cannot be honoured."""
    keys = client.get_host_keys()
    for entry in _entries(path, host):
        if entry.key is not None and _names(entry, name):
            keys.add(name, entry.key.get_name(), entry.key)
