"""A small lab for the as-built check: sandbox sshd hosts in network namespaces
(bench/sandbox_hosts.py) given SAN interfaces (veth pairs inside the namespace) with addresses,
MTUs and link state; loop devices that stand for LUNs, each known to a host by the udev database
entry lsblk reads (the host's own /run, as udev writes it from VPD 0x83/0x80); and, on hosts that
need one, an `iscsiadm` that prints a session list (a real capture, or one laid out from a real
tgt target) -- there is no kernel initiator here."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from bench.sandbox_hosts import SandboxLab


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


def add_san_port(lab: SandboxLab, host: str, name: str, address: str, mtu: int = 9000, up: bool = True) -> None:
    """An interface `name` inside the host's namespace, its peer `name`p the cable's far end."""
    ns = lab.hosts[host].netns
    ip("-n", ns, "link", "add", name, "type", "veth", "peer", "name", name + "p")
    ip("-n", ns, "addr", "add", address, "dev", name)
    ip("-n", ns, "link", "set", name, "mtu", str(mtu))
    ip("-n", ns, "link", "set", name, "up")
    ip("-n", ns, "link", "set", name + "p", "up" if up else "down")


def set_port(lab: SandboxLab, host: str, name: str, *, mtu: int | None = None, address: tuple[str, str] | None = None,
             peer_up: bool | None = None) -> None:
    ns = lab.hosts[host].netns
    if mtu is not None:
        ip("-n", ns, "link", "set", name, "mtu", str(mtu))
    if address is not None:
        ip("-n", ns, "addr", "del", address[0], "dev", name)
        ip("-n", ns, "addr", "add", address[1], "dev", name)
    if peer_up is not None:
        ip("-n", ns, "link", "set", name + "p", "up" if peer_up else "down")


def on_host(lab: SandboxLab, host: str, script: str) -> str:
    """Runs `script` as root on the host (its own mount namespace: its /run, its mounts)."""
    c = lab.connection(host)
    done = subprocess.run(["ssh", "-i", c["key_file"], "-o", f"UserKnownHostsFile={c['known_hosts']}",
                           "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-p", str(c["port"]),
                           f"root@{c['address']}", script], capture_output=True, text=True, timeout=30)
    if done.returncode:
        raise RuntimeError(f"{host}: {script!r} failed: {done.stderr}")
    return done.stdout


def loop_device(image: Path) -> str:
    return subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True,
                          timeout=20).stdout.strip()


def udev_entry(lab: SandboxLab, host: str, device: str, props: dict[str, str]) -> None:
    """The udev database record for `device` on this host: what lsblk reads WWN and SERIAL from."""
    major, minor = (int(x, 16) for x in subprocess.run(["stat", "-c", "%t %T", device], check=True,
                                                       capture_output=True, text=True).stdout.split())
    body = "".join(f"E:{k}={v}\n" for k, v in props.items())
    on_host(lab, host, f"mkdir -p /run/udev/data && printf %s {shlex.quote(body)} > /run/udev/data/b{major}:{minor}")


def forget_udev_entry(lab: SandboxLab, host: str, device: str) -> None:
    major, minor = (int(x, 16) for x in subprocess.run(["stat", "-c", "%t %T", device], check=True,
                                                       capture_output=True, text=True).stdout.split())
    on_host(lab, host, f"rm -f /run/udev/data/b{major}:{minor}")


def lun_props(wwn: str, serial: str) -> dict[str, str]:
    return {"ID_WWN": f"0x{wwn[:16]}", "ID_WWN_WITH_EXTENSION": f"0x{wwn}", "ID_SCSI_SERIAL": serial,
            "ID_SERIAL": f"3{wwn}", "ID_MODEL": "VIRTUAL-DISK"}


def iscsiadm_shim(lab: SandboxLab, host: str, folder: Path, session_list: str) -> None:
    """`iscsiadm -m session -P 3` on this host prints `session_list` (its own /usr/local/sbin)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sessions.txt").write_text(session_list)
    shim = folder / "iscsiadm"
    shim.write_text(f"""#!/bin/sh
# test stand-in: no kernel initiator runs here; only the read-only session listing is served
if [ "$*" = "-m session -P 3" ]; then cat {shlex.quote(str(folder / 'sessions.txt'))}; exit 0; fi
echo "iscsiadm (test shim): only -m session -P 3 is served" >&2; exit 7
""")
    shim.chmod(0o755)
    os.chmod(folder, 0o755)
    on_host(lab, host, f"mount --bind {shlex.quote(str(folder))} /usr/local/sbin")


def ssh_access(lab: SandboxLab, name: str) -> dict:
    h = lab.hosts[name]
    return {"host": name, "transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)}
