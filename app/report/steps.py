"""What the appendix says about a methodology step: where it runs, what each command is."""
from __future__ import annotations

from typing import Any

_SHELL_NAMES = {"powershell": "PowerShell", "bash": "bash", "vendor-cli": "Vendor CLI", "cmd": "Command prompt"}


def step_targets(step: Any) -> list[str]:
    """Hosts a step is done on: its target and any per-command target."""
    out = []
    target = getattr(step, "target", "") or ""
    if isinstance(target, str):
        if target:
            out.append(target)
    else:
        out += [t for t in target if t]
    for cmd in getattr(step, "automation", None) or []:
        t = getattr(cmd, "target", "")
        if t and t not in out:
            out.append(t)
    return out


_PLATFORM_NAMES = {"windows": "Windows", "linux": "Linux", "esxi": "ESXi", "array": "storage array"}


def command_label(cmd: Any) -> str:
    shell = _SHELL_NAMES.get(getattr(cmd, "shell", ""), getattr(cmd, "shell", "") or "Command")
    platform = getattr(cmd, "platform", "")
    target = getattr(cmd, "target", "")
    label = shell + (f" · {_PLATFORM_NAMES.get(platform, platform)}" if platform else "")
    return label + (f" on {target}" if target else "")
