"""A failover bed validates clean: a scenario that takes parts out of service on purpose (`failed:`)
loses the redundancy they gave, and that is what it tests.  `validate` exited 1 on every failover bed
(NET-002 and PATH-001 in path-a-down and path-b-down).  Now those findings are notes that name the
scenario and its parts; a scenario that cuts a host off its storage, or that also changes other
things, is still judged as before, and so is the reference."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_path_failover_bed import bed
from topology.fileformat import loads
from topology.validation import validate
from topology.validation.runner import has_errors

ROOT = Path(__file__).resolve().parent.parent
EXCEPTIONS = """exceptions:
  - {code: CON-002, subject: tgt1, reason: 'tgt serves LUNs from files; it has no disk groups'}
  - {code: PATH-002, subject: "tgt1#ctl0", reason: 'tgt is one daemon on one box'}
"""


def _failover_bed(*scenarios: str) -> str:
    return bed() + "scenarios:\n  - {id: all-paths, reference: true}\n" + "".join(scenarios) + EXCEPTIONS


FABRIC_A_DOWN = "  - {id: path-a-down, failed: ['lnx1:san0', 'lnx2:san0']}\n"


def _in(findings, scenario: str, *codes: str):
    return [f for f in findings if f.code in codes and scenario in f.holds_in]


def test_the_redundancy_a_failover_scenario_takes_out_is_a_note_that_names_it_not_an_error(tmp_path):
    findings = validate(loads(_failover_bed(FABRIC_A_DOWN), "failover.yaml"))
    lost = _in(findings, "path-a-down", "NET-002", "PATH-001")
    assert {f.code for f in lost} == {"NET-002", "PATH-001"}
    assert all(f.severity == "info" for f in lost)
    assert all("scenario path-a-down takes lnx1:san0, lnx2:san0 out of service on purpose" in f.hint for f in lost)
    assert not has_errors(findings)
    # the command line says so too: exit 0, and the notes are printed
    path = tmp_path / "failover.yaml"
    path.write_text(_failover_bed(FABRIC_A_DOWN))
    done = subprocess.run([sys.executable, "-m", "app.cli", "validate", str(path)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "INFO     PATH-001" in done.stdout and "none needed: scenario path-a-down" in done.stdout
    alone = subprocess.run([sys.executable, "-m", "app.cli", "validate", str(path), "--scenario", "path-a-down"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert alone.returncode == 0 and "none needed: scenario path-a-down" in alone.stdout, alone.stdout


def test_a_scenario_that_cuts_a_host_off_its_storage_is_still_an_error():
    both = "  - {id: lnx1-cut-off, failed: ['lnx1:san0', 'lnx1:san1']}\n"
    findings = validate(loads(_failover_bed(both), "failover.yaml"))
    cut = _in(findings, "lnx1-cut-off", "PATH-001")
    assert cut and any(f.severity == "error" and "no path" in f.message for f in cut), [f.message for f in cut]
    assert has_errors(findings)


def test_a_scenario_that_also_changes_other_things_and_the_reference_are_judged_as_before():
    # failed parts and an excluded component: the losses may not be the failures' alone
    mixed = "  - {id: mixed, failed: ['lnx1:san0'], excluded: ['lnx2']}\n"
    findings = validate(loads(_failover_bed(mixed), "failover.yaml"))
    assert [f.severity for f in _in(findings, "mixed", "NET-002", "PATH-001")] and \
        all(f.severity == "error" for f in _in(findings, "mixed", "NET-002", "PATH-001"))
    # the reference loses a cable: one path to each of lnx2's volumes is an error there, scenarios or not
    drawn = _failover_bed(FABRIC_A_DOWN).replace("  - {a: 'lnx2:san1', b: 'swB:2'}\n", "")
    findings = validate(loads(drawn, "failover.yaml"))
    assert [f for f in findings if f.code == "PATH-001" and f.severity == "error"
            and "reference" in f.holds_in and "lnx2" in f.subjects]


def test_an_exception_written_for_a_device_whose_findings_name_its_parts_says_which_subject_to_write():
    """PATH-002 names the controller (tgt1#ctl0), not the array: an exception for tgt1 matched nothing,
    and EXC-001 only said so."""
    text = _failover_bed(FABRIC_A_DOWN).replace('subject: "tgt1#ctl0"', "subject: tgt1")
    unmatched = [f for f in validate(loads(text, "failover.yaml")) if f.code == "EXC-001"]
    assert len(unmatched) == 1 and "PATH-002 on tgt1 matches nothing" in unmatched[0].message
    said = unmatched[0].message
    assert "its findings name tgt1#ctl0" in said and "(write one as the subject)" in said


def test_a_failover_that_brings_back_what_the_reference_leaves_out_does_not_excuse_its_faults(tmp_path):
    """The reference leaves lnx2 out (a standalone reference); path-a-down, which excludes nothing, brings
    it back.  lnx2 is cabled to one switch only: its one path is a fault of the bed, not of lnx1:san0
    being taken out, and it was noted as the failover's design ('none needed'), validate exiting 0."""
    text = (bed().replace("  - {a: 'lnx2:san1', b: 'swB:2'}\n", "")
            + "scenarios:\n  - {id: lnx1-alone, reference: true, excluded: [lnx2]}\n"
            + "  - {id: a-down, failed: ['lnx1:san0']}\n" + EXCEPTIONS)
    findings = validate(loads(text, "failover.yaml"))
    lnx2 = [f for f in _in(findings, "a-down", "PATH-001") if "lnx2" in f.subjects]
    assert lnx2 and all(f.severity == "error" and "none needed" not in f.hint for f in lnx2), \
        [(f.severity, f.message, f.hint) for f in lnx2]
    assert has_errors(findings)
    alone = validate(loads(text, "failover.yaml"), scenario="a-down")
    assert [f for f in alone if f.code == "PATH-001" and "lnx2" in f.subjects and f.severity == "error"]
    # a failover that leaves out what the reference leaves out differs from it by its failed part alone
    same = text.replace("{id: a-down, failed: ['lnx1:san0']}", "{id: a-down, failed: ['lnx1:san0'], excluded: [lnx2]}")
    noted = _in(validate(loads(same, "failover.yaml")), "a-down", "NET-002", "PATH-001")
    assert noted and all(f.severity == "info" for f in noted)


def test_a_host_cut_off_is_an_error_even_when_a_port_of_it_has_no_stated_role():
    """lnx1 has a third port whose role is not stated; ctl-down takes the array's one controller out.  At
    most 0 paths is no path: lnx1 was noted as 'one path at most', 'none needed', where lnx2, cut off
    the same way, was an error."""
    third = "          - {name: san2, address: 127.0.4.11/24, roles: not stated}\n"
    drawn = bed().replace("network: san-b, roles: [iscsi]}\n", "network: san-b, roles: [iscsi]}\n" + third, 1)
    text = (drawn + "scenarios:\n  - {id: all-paths, reference: true}\n  - {id: ctl-down, failed: ['tgt1:ctl0']}\n"
            + EXCEPTIONS)
    cut = [f for f in _in(validate(loads(text, "failover.yaml")), "ctl-down", "PATH-001") if "lnx1" in f.subjects]
    assert cut and all(f.severity == "error" and "lnx1 has no path to" in f.message for f in cut), \
        [(f.severity, f.message) for f in cut]
