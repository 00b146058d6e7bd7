"""The as-built check: the hosts' facts (read over the run's transports by app/asbuilt/) held
against the drawing.  `check(bed, facts)` gives findings with ASB-* codes, the values learnt that
the bed does not state, and the as-built table; `learn_edit` writes learnt values back as one edit."""
from __future__ import annotations

from topology.asbuilt.compare import check
from topology.asbuilt.facts import HostFacts
from topology.asbuilt.result import AsBuilt, Learnt, Row

__all__ = ["AsBuilt", "HostFacts", "Learnt", "Row", "check"]
