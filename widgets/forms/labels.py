"""A model field's name in words: 'memory_gb' is 'Memory (GB)' on the form, 'memory (GB)' in an
undo text.
"""
from __future__ import annotations

from html import escape
from typing import Any

from topology.vocabulary import ACRONYMS

# the product's acronyms, and the words a form writes its own way ('id' is the component's name)
_WORDS = {**ACRONYMS, "id": "Name", "vcpu": "vCPUs", "os_": "OS", "ghz": "Clock (GHz)"}
_UNITS = {"gb": "GB", "gbps": "Gb/s", "ghz": "GHz", "kb": "KB", "ms": "ms", "s": "s", "pct": "%",
          "minutes": "min", "iops": "IOPS"}


def field_label(attr: str) -> tuple[str, str]:
    """('Memory (GB)', 'GB') for 'memory_gb'."""
    words = attr.split("_")
    unit = ""
    if len(words) > 1 and words[-1] in _UNITS:
        unit = _UNITS[words.pop()]
    text = " ".join(_WORDS.get(w, w) for w in words)
    if words[0] not in _WORDS:               # 'vCPUs per thread' keeps its small v
        text = text[:1].upper() + text[1:]
    return (f"{text} ({unit})" if unit else text), unit


def edit_words(label: str) -> str:
    """'Memory (GB)' -> 'memory (GB)' for an undo text; 'MTU' and 'vCPUs' stay as they are."""
    first = label.split(" ")[0]
    return label if len(first) > 1 and (first.isupper() or first[0].islower()) else label[:1].lower() + label[1:]


def configuration_words(choice: Any, subject: str) -> list[str]:
    """What the chosen configuration does to one component, for the form's header: 'in configuration
    esxi: os VMware ESXi 5.5, hypervisor ESXi' or 'not in use in configuration esxi'."""
    if choice is None or choice.name is None:
        return []
    out = []
    if subject in choice.excluded():
        out.append(f"<b>not in use in configuration {escape(choice.name)}</b>")
    changed = choice.overrides(subject)
    if changed:
        said = ", ".join(f"{escape(str(k))} {escape(_said(v))}" for k, v in changed.items())
        out.append(f"<b>in configuration {escape(choice.name)}:</b> {said} (the fields below are the bed's "
                   "as drawn)")
    return out


def _said(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return "empty" if value is None else str(value)
