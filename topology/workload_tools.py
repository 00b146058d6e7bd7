"""The load tools a workload names and the parameters each one's steps read (`parameters:` keys),
for the workload form: the tool chooser and the parameters table.

The parameters are those the step templates in resources/templates read as
`workload.parameters.NAME` (a test checks every one is listed here), plus how long a load runs
(`topology.workload_time`).  A bed may give any other key: it is kept and shown too.
"""
from __future__ import annotations

TOOLS = ("fio", "DiskSpd", "Iometer", "Jetstress", "LoadGen", "DVD Store", "sqlio", "FSCT", "vdbench")

# every tool's steps: installing it and starting it by hand
COMMON: tuple[tuple[str, str], ...] = (
    ("version", "the release installed"),
    ("install_path", "where it is installed"),
    ("files", "files it needs copied to its machine"),
    ("command", "the command line a person starts it with (a step done by hand)"),
    ("duration_minutes", "how long it runs, when the workload's own duration is empty"),
)
SPECIFIC: dict[str, tuple[tuple[str, str], ...]] = {
    "fio": (("filename", "the file or device fio reads and writes"),
            ("size", "how much of it, e.g. 16m or 10g"),
            ("iodepth", "I/O queue depth per job")),
}


def known_parameters(tool: str) -> tuple[tuple[str, str], ...]:
    """(key, what it is) for a tool, its own first; the common ones for any tool."""
    own = next((v for k, v in SPECIFIC.items() if k.lower() == (tool or "").strip().lower()), ())
    return own + COMMON
