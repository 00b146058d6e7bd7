"""What the as-built check found: findings in the validator's vocabulary, the values learnt that
the bed does not state, and one row per fact compared (the as-built table)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from topology.validation.registry import Finding, RuleInfo


@dataclass
class Learnt:
    """A value a host showed that the bed does not state: offered for writing back."""
    subject: str        # ARRAY:VOLUME, HOST:PORT or HOST
    field: str          # wwn | serial | target | mac | speed_gbps | iqn
    value: Any
    source: str         # where it was seen: 'h1: lsblk loop3'


@dataclass
class Row:
    """One fact compared, for the as-built table."""
    host: str
    fact: str           # 'san1 MTU', 'LUN tgt1:data', 'iSCSI sessions to tgt1'
    expected: str
    seen: str
    code: str = ""      # the finding's code when they differ, '' when the host is as drawn


@dataclass
class AsBuilt:
    findings: list[Finding] = field(default_factory=list)
    learnt: list[Learnt] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)      # the hosts whose facts were held against the bed

    def add(self, info: RuleInfo, subjects: Iterable[str], message: str, *, severity: str = "") -> None:
        self.findings.append(Finding(info.code, severity or info.severity, tuple(dict.fromkeys(subjects)), message,
                                     info.reason, info.source, info.hint))

    def as_dict(self) -> dict[str, Any]:
        return {"hosts": self.hosts, "findings": [f.as_dict() for f in self.findings],
                "learnt": [vars(x) for x in self.learnt], "rows": [vars(r) for r in self.rows]}
