"""ACC-001, ACC-002: how the run reaches a host must not hand its password to the network."""
from __future__ import annotations

from collections.abc import Iterator

from topology.validation.context import Context
from topology.validation.registry import Hit, hit, rule


@rule("ACC-001", "warning", "WinRM Basic login over plain HTTP",
      reason="Basic authentication sends the user name and password base64-encoded, which is plain "
             "text; over http:// anyone on the path between the workstation and the host reads them.",
      source="Microsoft, 'Installation and configuration for Windows Remote Management' "
             "(AllowUnencrypted and Basic are off by default for this reason)",
      hint="use winrm_scheme: https, or winrm_auth: ntlm/kerberos, which never send the password itself")
def acc_001(ctx: Context) -> Iterator[Hit]:
    for a in ctx.bed.access:
        if a.transport == "winrm" and a.winrm_scheme == "http" and a.winrm_auth == "basic":
            yield hit(a.host, f"{a.host}: WinRM Basic over http:// sends the password of "
                              f"{a.user or 'its user'} readable to the network")


@rule("ACC-002", "warning", "WinRM certificate check turned off",
      reason="With verify_tls off, any machine that answers on the host's address gets the login: "
             "the connection is encrypted, but to whom is not checked.",
      source="RFC 9110 section 4.3.4 (https: the client must verify the server's identity)",
      hint="leave verify_tls on and give the lab's CA bundle in ca_file")
def acc_002(ctx: Context) -> Iterator[Hit]:
    for a in ctx.bed.access:
        if a.transport == "winrm" and a.winrm_scheme == "https" and not a.verify_tls:
            yield hit(a.host, f"{a.host}: the WinRM server certificate is not checked (verify_tls: false), "
                              "so the password goes to whoever answers")
