"""What an interface address field accepts as it is typed: an IP address with its prefix length
(192.168.130.201/24), or without one when the port's network states its CIDR (the prefix is
then the network's).  An address with neither would print «missing: port.mask» in every step
that sets it, so it is refused at entry, saying how to write it."""
from __future__ import annotations

import ipaddress
from typing import Any

from topology.model import Cluster, Port, VNic

# the records whose `address` is an interface address (a host access entry's is a name or an IP to connect to)
INTERFACE_ADDRESS_HOLDERS = (Port, VNic, Cluster)


def needs_prefix(holder: Any, attr: str) -> bool:
    return attr == "address" and isinstance(holder, INTERFACE_ADDRESS_HOLDERS)


def address_problem(text: str, network_cidr: str = "") -> str | None:
    """Why `text` cannot be stored as an interface address; None when it can."""
    text = text.strip()
    if not text:
        return None
    try:
        interface = ipaddress.ip_interface(text)
    except ValueError:
        return f"{text!r} is not an IP address: write it with its prefix length, e.g. 192.168.130.201/24"
    if "/" in text:
        return None
    try:
        network = ipaddress.ip_network(network_cidr.strip(), strict=False) if network_cidr.strip() else None
    except ValueError:
        network = None
    if network is not None and interface.ip in network:
        return None
    if network is not None:
        return (f"{text} has no prefix length and is outside its network {network}: write it as "
                f"{text}/{network.prefixlen} if it belongs there, or with its own prefix length")
    return (f"{text} has no prefix length (the subnet mask): write it as {text}/N, e.g. {text}/24, "
            "or choose the port's network first")
