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


def varied_parameter(tool: str, variable: str, parameters: dict) -> str:
    """The parameter of a workload that a test matrix's `variable` names ('' when none): a key of its own
    parameters or of its tool's, written as the key ('iodepth', 'block-size' for block_size) or in the words
    that describe it ('queue depth' is fio's iodepth, "I/O queue depth per job")."""
    def norm(text: str) -> str:
        return "_".join(str(text).strip().lower().replace("-", " ").split())
    wanted = norm(variable)
    if not wanted:
        return ""
    known = known_parameters(tool)
    for key in [*parameters, *(k for k, _ in known)]:
        if norm(key) == wanted:
            return str(key)
    words = wanted.replace("_", " ")
    hits = [k for k, what in known if words in what.lower()]
    return hits[0] if len(hits) == 1 else ""
