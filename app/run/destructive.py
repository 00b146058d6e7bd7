"""The steps of a run that write to disks (partition, format, mkfs), for the confirmation the CLI
(`--yes-destructive`) and the Run tab ask before the first of them, and for `run --dry-run`."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from app.run import journal as J
from app.run.plan import RunStep

_FINISHED = (J.OK, J.DONE, J.SKIPPED)


def pending_writes(steps: Sequence[RunStep], task_state: Callable) -> list[RunStep]:
    """The automated steps among `steps` that write to a disk and have not finished yet."""
    return [s for s in steps if s.destructive and not s.manual
            and any(task_state(t).status not in _FINISHED for t in s.tasks)]


def writes_text(steps: Sequence[RunStep]) -> str:
    """What the user confirms: each step, the machine it runs on and every disk it writes to."""
    lines = [f"{len(steps)} step(s) of this run write to disks; each selects its disk by the identity below "
             "and refuses one that is not empty or not the volume's:"]
    for s in steps:
        lines.append(f"  {s.number} on {', '.join(s.hosts)}:")
        lines += [f"      {d}" for d in s.devices]
    return "\n".join(lines)
