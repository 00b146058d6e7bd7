"""The methodology as data (`testbed-studio methodology FILE --format json`): every section and step
with its number, text, the machine it runs on and that machine's platform, each command's shell,
script and verification, and the values it used with the bed field each came from."""
from __future__ import annotations

import json
from typing import Any

from topology.methodology.steps import Methodology, Step

FORMAT_VERSION = 1


def _step(step: Step) -> dict[str, Any]:
    return {
        "number": step.number,
        "text": step.text,
        "target": step.target,
        "platform": step.platform,
        "machine": step.machine,
        "manual": step.manual,
        "manual_reason": step.manual_reason,
        "runnable": step.runnable,
        "destructive": step.destructive,
        "devices": list(step.devices),
        "unresolved": list(step.unresolved),
        "not_stated": list(step.not_stated),
        "notes": list(step.notes),
        "table": {"header": step.table[0], "rows": step.table[1]} if step.table is not None else None,
        "position": step.position, "heading": step.heading,
        "commands": [{"shell": c.shell, "script": c.script, "verify": c.verify, "platform": c.platform,
                      "target": c.target or step.target, "note": c.note, "invoke": c.invoke} for c in step.automation],
        "values": [{"name": name, "value": v.text, "source": v.source} for name, v in sorted(step.values.items())],
        "template": step.template,
    }


def to_data(meth: Methodology) -> dict[str, Any]:
    return {
        "format": "testbed-studio methodology",
        "format_version": FORMAT_VERSION,
        "bed": meth.bed_name,
        "validation": {"errors": meth.errors, "warnings": meth.warnings, "banner": meth.banner(),
                       "findings": list(meth.findings_summary), "failed": meth.validation_failed},
        "incomplete": meth.incomplete_note,
        "steps": sum(len(s.steps) for s in meth.sections),
        "automated": sum(1 for s in meth.steps() if s.automation),
        "sections": [{"number": sec.number, "key": sec.key, "title": sec.title,
                      "steps": [_step(st) for st in sec.steps]} for sec in meth.sections],
    }


def to_json(meth: Methodology) -> str:
    return json.dumps(to_data(meth), indent=1, ensure_ascii=False) + "\n"
