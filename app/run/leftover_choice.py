"""What a resume does with a step's job that its host still holds, decided from what the journal
says became of the step and what the host says about its job (app.remote.jobs).

A step whose attempt the journal says never ended (its driver died, or the connection dropped)
may still be running: a person chooses between waiting for it and stopping it.  A step whose
attempt the driver ended itself (its timeout, or the user's Stop) was meant to be stopped: a copy
still running there is one whose stop never reached the host (a cut link), so it is stopped now,
by the job folder of this run and step, without asking anyone.  A job that ended on its own is
taken as it ended either way: running the step again would run it twice.
"""
from __future__ import annotations

from app.remote import jobs
from app.run import journal as J

ADOPT = "adopt"     # follow it to its end (or take its recorded end) as the step's result
STOP = "stop"       # stop its process group on its host, then run the step again
ASK = "ask"         # a person decides: adopt or stop
RUN = "run"         # nothing of it is left on the host: the step runs again like any failed one

# the journal says the driver stopped these attempts itself, yet their stop may not have reached the host
STOPPED_BY_DRIVER = frozenset({J.TIMEOUT, J.CANCELLED})
# attempts whose job may still be on its host: their end was never seen, or was the driver's own stop
MAY_BE_LEFT = frozenset({J.INTERRUPTED, J.LOST}) | STOPPED_BY_DRIVER


def choice(journal_status: str, host_status: str) -> str:
    """ADOPT, STOP, ASK or RUN for a step in `journal_status` whose job the host reports as
    `host_status` (jobs.RUNNING, ENDED, DEAD or GONE)."""
    if host_status == jobs.ENDED:
        return ADOPT
    if host_status == jobs.RUNNING:
        return STOP if journal_status in STOPPED_BY_DRIVER else ASK
    return RUN


def why_stopped(journal_status: str) -> str:
    """Why a copy of a step is stopped (or taken) without a question: what the journal says ended it."""
    cause = "it timed out" if journal_status == J.TIMEOUT else "the user stopped it"
    return f"{cause} earlier, but that stop never reached the host and the step kept running there"


def late_copy_refused(journal_status: str, result) -> bool:
    """A new attempt's start was refused because the step's job already runs on its host, while
    the journal never saw the attempt before end on the host (timeout, Stop, a dead driver, a lost
    link): that attempt's start was held up in a cut link and reached the host after the resume
    looked there."""
    return (journal_status in MAY_BE_LEFT and result.exit_code == 125
            and any(jobs.ALREADY_RUNNING in line for line in result.tail))


def late_copy_ended(result) -> bool:
    """A new attempt's start was refused because the job of the earlier attempt, whose end the
    journal never saw (timeout, Stop, a dead driver, a lost link), started on the host late, after
    the resume looked there, and ran to its end: the step ran already, and that outcome is taken."""
    return result.exit_code == 125 and any(jobs.EARLIER_ENDED in line for line in result.tail)
