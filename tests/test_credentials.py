"""Passwords go to the keyring and nowhere else."""
from __future__ import annotations

import keyring
import pytest

from app.remote.credentials import CredentialStore, entry_name
from topology.fileformat import dumps, loads
from topology.model import HostAccess


def test_a_group_credential_is_shared_and_kept_in_the_keyring(memory_keyring):
    store = CredentialStore(service="tbs-test")
    assert store.persistent
    a1 = HostAccess(host="R710-1", transport="winrm", user="LAB\\admin", credential="lab-admins")
    a2 = HostAccess(host="R710-2", transport="winrm", user="LAB\\admin", credential="lab-admins")
    a3 = HostAccess(host="loadgen", transport="ssh", user="root")
    assert store.set(entry_name(a1), "s3cret!")
    assert memory_keyring.items[("tbs-test", "lab-admins")] == "s3cret!"
    assert CredentialStore(service="tbs-test").get(entry_name(a2)) == "s3cret!"   # a new session finds it
    assert entry_name(a3) == "loadgen" and store.get("loadgen") is None
    store.forget("lab-admins")
    assert CredentialStore(service="tbs-test").get("lab-admins") is None


def test_without_a_keyring_a_password_is_kept_for_the_session_only():
    from keyring.backends import fail
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        store = CredentialStore(service="tbs-test")
        assert not store.persistent and "session only" in store.backend_name
        store.set("h1", "pw", remember=True)
        assert store.get("h1") == "pw"
        assert CredentialStore(service="tbs-test").get("h1") is None
    finally:
        keyring.set_keyring(previous)


def test_the_project_file_holds_how_to_reach_a_host_but_no_secret(memory_keyring):
    text = """\
format_version: 1
bed: {name: access}
servers:
  - {id: h1, platform: windows}
access:
  - {host: h1, transport: winrm, address: 10.0.0.11, user: admin, credential: lab-admins,
     winrm_scheme: https, winrm_auth: ntlm}
"""
    bed = loads(text)
    CredentialStore(service="tbs-test").set("lab-admins", "s3cret!")
    saved = dumps(bed)
    assert "lab-admins" in saved and "s3cret" not in saved
    assert bed.access[0].verify_tls is True      # certificate validation unless switched off


def test_an_access_entry_for_an_unknown_component_is_reported_with_its_line():
    from topology.errors import BedFileError
    text = "format_version: 1\nbed: {name: x}\nservers:\n  - {id: h1}\naccess:\n  - {host: h9, transport: ssh}\n"
    with pytest.raises(BedFileError) as exc:
        loads(text)
    assert "h9" in exc.value.format() and ":6" in exc.value.format()
