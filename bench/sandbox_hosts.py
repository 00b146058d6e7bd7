"""A private lab of real SSH hosts on this machine, for tests, benchmarks and for trying the
run wizard without hardware.

Every host is a real `sshd` with its own ed25519 host key, listening on its own loopback
address (127.0.0.N) or inside its own network namespace (a veth pair whose root end can be
taken down to cut the link).  Each sshd runs as PID 1 of a private pid namespace: killing
the host kills every session on it at once, which is what a "host died" fault looks like.  It
has a /proc of its own, as a real host does (a process's /proc/PID is that process: the run's
jobs tell a live job from a pid reused since by the process's start time there).
One client key, authorized for root, logs in to all of them.

    with SandboxLab(tmp_path) as lab:
        lab.start_many(20)
        host = lab.hosts["h1"]          # address, port, host_key_fingerprint, ...
        lab.kill("h1"); lab.restart("h1")

Needs root (or CAP_SYS_ADMIN for the namespaces), openssh-server and util-linux' unshare;
`SandboxLab.unavailable_reason()` says why a machine cannot host a lab.  No Qt here.
"""
from __future__ import annotations

import atexit
import base64
import hashlib
import itertools
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
START_WAIT = 10.0          # seconds a host may take to accept TCP before the lab gives up
STOP_WAIT = 5.0
NETNS_PREFIX = "tbs-"
NETNS_SUBNETS = "10.213"
_LAB_NUMBERS = itertools.count()   # 10.213.<lab>.0/24 per lab, one /30 per namespace host

# /run is replaced by a tmpfs in the host's own mount namespace: sshd insists on its
# privilege separation directory /run/sshd and every host gets a private one.
# The login user's shell start-up files are hidden too: a sandbox host is a clean machine, and a
# workstation's own ~/.bashrc (pyenv init and the like, run by bash for every SSH session)
# would otherwise cost ~0.3 s of CPU per step and dominate any timing.
_HOST_SHELL = ("mount -t tmpfs tmpfs /run && mkdir -p /run/sshd && touch /run/empty-rc && "
               "for f in \"$HOME/.bashrc\" \"$HOME/.profile\" \"$HOME/.bash_profile\" \"$HOME/.bash_login\"; do "
               "[ -f \"$f\" ] && mount --bind /run/empty-rc \"$f\"; done; "
               "exec {sshd} -D -e -f {cfg}")


class SandboxError(RuntimeError):
    """The lab could not be set up: the message says which host and why."""


@dataclass
class SandboxHost:
    name: str
    address: str
    port: int
    host_key_path: Path
    host_key_public: str           # "ssh-ed25519 AAAA..."
    host_key_fingerprint: str      # "SHA256:..." as ssh-keygen -lf prints it
    config_path: Path
    log_path: Path
    netns: str | None = None       # namespace hosts only
    veth: str | None = None        # root-side end of the namespace host's link
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def known_hosts_name(self) -> str:
        return self.address if self.port == 22 else f"[{self.address}]:{self.port}"

    @property
    def known_hosts_line(self) -> str:
        return f"{self.known_hosts_name} {self.host_key_public}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def fingerprint_of_public_key(public_line: str) -> str:
    """SHA256 fingerprint of an OpenSSH public key line, as `ssh-keygen -lf` prints it."""
    blob = base64.b64decode(public_line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def host_python() -> str:
    """The Python Ansible's modules run under on the sandbox hosts: the system's, as on a real host.
    Not this venv's: its interpreter and the project's modules under it are slower to start (a third
    of an Ansible plan's time, and half of a playbook test's, went to it here)."""
    import sys
    system = "/usr/bin/python3"
    return system if os.path.exists(system) else sys.executable


class SandboxLab:
    _netns_reason: str | None = None
    _netns_checked = False

    def __init__(self, root_dir: str | os.PathLike | None = None):
        self._own_root = root_dir is None
        self.root = Path(root_dir or tempfile.mkdtemp(prefix="tbs-lab-")).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "run").mkdir(exist_ok=True)
        self.hosts: dict[str, SandboxHost] = {}
        self._lock = threading.Lock()
        self._next_loopback = 2
        self._next_netns = 0
        # in namespace and interface names (at most 15 characters): unique per process and lab
        self._tag = f"{os.getpid() & 0xfffff:05x}{next(_LAB_NUMBERS) % 100}"
        self._subnet: int | None = None         # third octet of this lab's 10.213.x.0/24
        self._stopped = False
        self.client_key_path = self.root / "client_ed25519"
        self.authorized_keys_path = self.root / "authorized_keys"
        self.known_hosts_path = self.root / "known_hosts"
        self._keygen(self.client_key_path, "testbed-studio-sandbox-client").wait()
        shutil.copyfile(self.client_key_path.with_suffix(".pub"), self.authorized_keys_path)
        self._write_known_hosts()
        self._extra_sshd_options = _options_for_sshd_version()
        atexit.register(self.stop)

    # -- availability ---------------------------------------------------------------------

    @staticmethod
    def unavailable_reason() -> str | None:
        """None if real sshd hosts can run here, else why not (for pytest.skip)."""
        if not Path(SSHD).exists():
            return f"{SSHD} is missing: install openssh-server"
        for tool in ("ssh-keygen", "unshare"):
            if shutil.which(tool) is None:
                return f"{tool} is missing: install openssh-client / util-linux"
        if os.geteuid() != 0:
            return "sandbox sshd hosts need root (private mount and pid namespaces, root login)"
        return None

    @classmethod
    def netns_available(cls) -> bool:
        return cls.netns_unavailable_reason() is None

    @classmethod
    def netns_unavailable_reason(cls) -> str | None:
        if not cls._netns_checked:
            cls._netns_reason = cls._probe_netns()
            cls._netns_checked = True
        return cls._netns_reason

    @classmethod
    def _probe_netns(cls) -> str | None:
        base = cls.unavailable_reason()
        if base:
            return base
        if shutil.which("ip") is None:
            return "the ip command is missing: install iproute2"
        probe = f"{NETNS_PREFIX}probe{os.getpid() & 0xffff:x}"
        made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
        if made.returncode != 0:
            return f"cannot create network namespaces (needs CAP_NET_ADMIN): {made.stderr.strip()}"
        veth = subprocess.run(["ip", "link", "add", f"{probe}a", "type", "veth", "peer", "name",
                               f"{probe}b", "netns", probe], capture_output=True, text=True)
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        if veth.returncode != 0:
            return f"cannot create veth links: {veth.stderr.strip()}"
        return None

    # -- context manager ------------------------------------------------------------------

    def __enter__(self) -> SandboxLab:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- hosts ----------------------------------------------------------------------------

    def add_host(self, name: str, *, start: bool = True) -> SandboxHost:
        """A loopback host on its own 127.0.0.N address and a free port."""
        return self._add_hosts([name], start=start)[0]

    def start_many(self, count: int, prefix: str = "h") -> list[SandboxHost]:
        """`count` loopback hosts named prefix1..prefixN, started concurrently."""
        first = sum(1 for n in self.hosts if re.fullmatch(rf"{re.escape(prefix)}\d+", n)) + 1
        return self._add_hosts([f"{prefix}{i}" for i in range(first, first + count)], start=True)

    def _add_hosts(self, names: list[str], *, start: bool) -> list[SandboxHost]:
        for name in names:
            if name in self.hosts:
                raise SandboxError(f"the lab already has a host named {name}")
        keygens = [self._keygen(self._host_dir(n) / "host_ed25519", f"sandbox-{n}") for n in names]
        for proc in keygens:
            if proc.wait(timeout=30) != 0:
                raise SandboxError(f"ssh-keygen failed: {proc.stderr.read().decode().strip()}")
        made = []
        with self._lock:
            for name in names:
                if self._next_loopback > 254:
                    raise SandboxError("a lab holds at most 253 loopback hosts")
                address = f"127.0.0.{self._next_loopback}"
                self._next_loopback += 1
                made.append(self._make_host(name, address, _free_port(address)))
        self._write_known_hosts()
        if start:
            self._start(made)
        return made

    def add_netns_host(self, name: str, *, start: bool = True) -> SandboxHost:
        """A host in its own network namespace behind a veth link: sshd on port 22 of
        10.213.<lab>.<4i+2>, the root end is 10.213.<lab>.<4i+1>."""
        reason = self.netns_unavailable_reason()
        if reason:
            raise SandboxError(reason)
        if name in self.hosts:
            raise SandboxError(f"the lab already has a host named {name}")
        self._keygen(self._host_dir(name) / "host_ed25519", f"sandbox-{name}").wait(timeout=30)
        with self._lock:
            if self._subnet is None:
                self._subnet = _free_subnet()
                # Without this, a cut link would send the lab's packets out of the default
                # route into the real network: they fail here instead.
                _ip("route", "add", "unreachable", f"{NETNS_SUBNETS}.{self._subnet}.0/24")
            index = self._next_netns
            self._next_netns += 1
            if index > 62:
                raise SandboxError("a lab holds at most 63 namespace hosts")
        netns = f"{NETNS_PREFIX}{self._tag}{index}"
        veth_root, veth_inside = f"tbs{self._tag}h{index}", f"tbs{self._tag}n{index}"
        root_ip = f"{NETNS_SUBNETS}.{self._subnet}.{4 * index + 1}"
        host_ip = f"{NETNS_SUBNETS}.{self._subnet}.{4 * index + 2}"
        _ip("netns", "add", netns)
        try:
            _ip("link", "add", veth_root, "type", "veth", "peer", "name", veth_inside, "netns", netns)
            _ip("addr", "add", f"{root_ip}/30", "dev", veth_root)
            _ip("link", "set", veth_root, "up")
            _ip("-n", netns, "addr", "add", f"{host_ip}/30", "dev", veth_inside)
            _ip("-n", netns, "link", "set", veth_inside, "up")
            _ip("-n", netns, "link", "set", "lo", "up")
        except SandboxError:
            _ip("link", "del", veth_root, check=False)
            _ip("netns", "del", netns, check=False)
            raise
        host = self._make_host(name, host_ip, 22, netns=netns, veth=veth_root)
        self._write_known_hosts()
        if start:
            self._start([host])
        return host

    def _make_host(self, name: str, address: str, port: int, **where) -> SandboxHost:
        folder = self._host_dir(name)
        key = folder / "host_ed25519"
        public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
        cfg = folder / "sshd_config"
        cfg.write_text("\n".join([
            f"ListenAddress {address}:{port}",
            f"HostKey {key}",
            f"AuthorizedKeysFile {self.authorized_keys_path}",
            f"PidFile {folder / 'sshd.pid'}",
            "UsePAM no",
            # key logins only: a password attempt is still made and refused, which is
            # what the "wrong password" path needs, and the lab never opens a password door
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication yes",
            "KbdInteractiveAuthentication no",
            "StrictModes no",
            "MaxStartups 500",
            "MaxSessions 200",
            "MaxAuthTries 20",
            "AllowTcpForwarding yes",
            "UseDNS no",
            "PrintMotd no",
            "LogLevel ERROR",
            *self._extra_sshd_options,
            "",
        ]))
        host = SandboxHost(name, address, port, key, public, fingerprint_of_public_key(public),
                           cfg, folder / "sshd.log", **where)
        self.hosts[name] = host
        return host

    def _host_dir(self, name: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise SandboxError(f"host name {name!r}: use letters, digits, '-', '_' and '.'")
        folder = self.root / "hosts" / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @staticmethod
    def _keygen(path: Path, comment: str) -> subprocess.Popen:
        for old in (path, path.with_suffix(".pub")):
            old.unlink(missing_ok=True)
        return subprocess.Popen(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment,
                                 "-f", str(path)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def _write_known_hosts(self) -> None:
        lines = [h.known_hosts_line for h in self.hosts.values()]
        self.known_hosts_path.write_text("".join(line + "\n" for line in lines))
        self.known_hosts_path.chmod(0o600)

    # -- processes ------------------------------------------------------------------------

    def _spawn(self, host: SandboxHost) -> None:
        argv = ["unshare", "-m", "-p", "-f", "--mount-proc", "--kill-child", "sh", "-c",
                _HOST_SHELL.format(sshd=SSHD, cfg=host.config_path)]
        if host.netns:
            argv = ["ip", "netns", "exec", host.netns, *argv]
        with open(host.log_path, "ab") as log:
            # its own session: a Ctrl-C meant for the test run does not reach the hosts,
            # stop() ends them in order
            host.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            start_new_session=True)

    def _start(self, hosts: list[SandboxHost]) -> None:
        for host in hosts:
            self._spawn(host)
        deadline = time.monotonic() + START_WAIT
        waiting = list(hosts)
        retried: set[str] = set()
        while waiting:
            for host in list(waiting):
                if _accepts_tcp(host.address, host.port):
                    waiting.remove(host)
                elif host.process.poll() is not None:
                    log = _tail(host.log_path)
                    # the free port was taken between picking it and sshd binding it
                    if "Address already in use" in log and host.netns is None \
                            and host.name not in retried:
                        retried.add(host.name)
                        host.port = _free_port(host.address)
                        self._rewrite_listen(host)
                        self._write_known_hosts()
                        self._spawn(host)
                        continue
                    raise SandboxError(f"sandbox host {host.name} ({host.address}:{host.port}) "
                                       f"did not start: sshd said: {log or '(nothing)'}")
            if waiting and time.monotonic() > deadline:
                names = ", ".join(h.name for h in waiting)
                raise SandboxError(f"sandbox hosts {names} did not accept connections within "
                                   f"{START_WAIT:g} s; sshd said: {_tail(waiting[0].log_path) or '(nothing)'}")
            if waiting:
                time.sleep(0.02)

    @staticmethod
    def _rewrite_listen(host: SandboxHost) -> None:
        text = host.config_path.read_text()
        host.config_path.write_text(re.sub(r"(?m)^ListenAddress .*$",
                                           f"ListenAddress {host.address}:{host.port}", text))

    def kill(self, name: str) -> None:
        """SIGKILL the host: sshd and every session on it die at once, like a power cut."""
        host = self.hosts[name]
        if host.process is not None and host.process.poll() is None:
            host.process.kill()   # --kill-child takes sshd (PID 1 of its namespace) with it
            try:
                host.process.wait(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                pass
        # sshd's pid namespace is gone once its PID 1 is; wait for the port to close so a
        # restart does not race the dying listener
        deadline = time.monotonic() + STOP_WAIT
        while _accepts_tcp(host.address, host.port, timeout=0.2) and time.monotonic() < deadline:
            time.sleep(0.02)

    def restart(self, name: str) -> SandboxHost:
        self.kill(name)
        host = self.hosts[name]
        self._start([host])
        return host

    def link_down(self, name: str) -> None:
        _ip("link", "set", self._veth(name), "down")

    def link_up(self, name: str) -> None:
        _ip("link", "set", self._veth(name), "up")

    def _veth(self, name: str) -> str:
        host = self.hosts[name]
        if host.veth is None:
            raise SandboxError(f"{name} is a loopback host: only namespace hosts have a link to cut")
        return host.veth

    def stop(self) -> None:
        """End every host and remove the namespaces, links and route the lab made."""
        if self._stopped:
            return
        self._stopped = True
        for host in self.hosts.values():
            if host.process is not None and host.process.poll() is None:
                host.process.kill()
        deadline = time.monotonic() + STOP_WAIT
        for host in self.hosts.values():
            if host.process is not None:
                try:
                    host.process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        for host in self.hosts.values():
            if host.veth:
                _ip("link", "del", host.veth, check=False)
            if host.netns:
                _ip("netns", "del", host.netns, check=False)
        if self._subnet is not None:
            _ip("route", "del", "unreachable", f"{NETNS_SUBNETS}.{self._subnet}.0/24", check=False)
        atexit.unregister(self.stop)
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- for callers ----------------------------------------------------------------------

    def connection(self, name: str) -> dict:
        """Keyword arguments for SSHTransport that reach this host as root."""
        host = self.hosts[name]
        return dict(host=name, address=host.address, port=host.port, user="root",
                    key_file=str(self.client_key_path), allow_agent=False,
                    known_hosts=str(self.known_hosts_path))


def _ip(*args: str, check: bool = True) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SandboxError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")


def _free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def _free_subnet() -> int:
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True).stdout
    used += subprocess.run(["ip", "-4", "route", "show", "table", "all"], capture_output=True,
                           text=True).stdout
    taken = {int(m) for m in re.findall(rf"{re.escape(NETNS_SUBNETS)}\.(\d+)\.", used)}
    start = os.getpid() % 250
    for offset in range(250):
        candidate = (start + offset) % 250 + 1
        if candidate not in taken:
            return candidate
    raise SandboxError(f"no free {NETNS_SUBNETS}.x.0/24 subnet left for the lab")


def _accepts_tcp(address: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def _tail(path: Path, limit: int = 600) -> str:
    try:
        return path.read_text(errors="replace").strip()[-limit:]
    except OSError:
        return ""


def _options_for_sshd_version() -> list[str]:
    """OpenSSH 9.8 penalizes sources that fail auth or drop sessions; a test lab does both
    on purpose, from one address, many times."""
    done = subprocess.run([SSHD, "-V"], capture_output=True, text=True)
    found = re.search(r"OpenSSH_(\d+)\.(\d+)", done.stderr + done.stdout)
    if found and (int(found[1]), int(found[2])) >= (9, 8):
        return ["PerSourcePenalties no"]
    return []
