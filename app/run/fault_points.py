"""Named points in the run engine where a test makes the driver die as `kill -9` would.

A driver can die anywhere; some places are too narrow to hit with a signal from outside (between
starting a job on its host and journalling its process).  A test names one in the environment
(TESTBED_STUDIO_DIE_AT=job-started) and the driver kills itself there.  Unset, as in every real
run, a point does nothing.
"""
from __future__ import annotations

import os
import signal

ENV = "TESTBED_STUDIO_DIE_AT"


def reached(point: str) -> None:
    if os.environ.get(ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)
