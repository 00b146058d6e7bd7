"""Passwords for the hosts, kept in the system keyring and nowhere else.

An entry is named by the access entry's `credential` (shared by a group of hosts) or, when
that is empty, by the host id.  When the machine has no usable keyring (a bare server, CI),
passwords typed in this session are held in memory only, and `persistent` says so; nothing
is ever written to the project file, the run journal or a log.
"""
from __future__ import annotations

import threading

SERVICE = "testbed-studio"


def entry_name(access) -> str:
    return access.credential or access.host


class CredentialStore:
    def __init__(self, service: str = SERVICE):
        self.service = service
        self._session: dict[str, str] = {}
        self._lock = threading.Lock()
        self._keyring = _usable_keyring()

    @property
    def persistent(self) -> bool:
        return self._keyring is not None

    @property
    def backend_name(self) -> str:
        if self._keyring is None:
            return "none (passwords are kept for this session only)"
        return type(self._keyring.get_keyring()).__name__

    def get(self, entry: str) -> str | None:
        with self._lock:
            if entry in self._session:
                return self._session[entry]
        if self._keyring is not None:
            try:
                return self._keyring.get_password(self.service, entry)
            except Exception:
                return None
        return None

    def set(self, entry: str, password: str, remember: bool = True) -> bool:
        """Keep `password` for this session and, when `remember`, in the keyring.  False when
        the keyring refused it (it is still kept for the session)."""
        with self._lock:
            self._session[entry] = password
        if remember and self._keyring is not None:
            try:
                self._keyring.set_password(self.service, entry, password)
                return True
            except Exception:
                return False
        return not remember

    def forget(self, entry: str) -> None:
        with self._lock:
            self._session.pop(entry, None)
        if self._keyring is not None:
            try:
                self._keyring.delete_password(self.service, entry)
            except Exception:
                pass


def _usable_keyring():
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
        return None
    return keyring
