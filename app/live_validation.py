"""Validation that follows the user's edits without blocking the window.

Edits restart a short debounce timer; when it fires, a worker thread validates the bed and the
findings come back through a queued signal.  The worker reads the document's own bed, no copy:
copying a 5,000-device bed (pickle) holds the interpreter lock for longer than a frame, on any
thread.  Reading while the user edits is safe because of the document's `edit_seq` (odd while an
edit changes the model): the worker notes it before and after, and a validation an edit ran
into is thrown away — that edit has already asked for the next validation, whose result is the
one shown.  Rules only read the bed.  A result for an older revision than the document's
current one is dropped too, so the panel never shows findings for a bed that no longer exists.
The timer, the worker and the dropping are app/background.py's.

The cyclic garbage collector is held off while the worker validates: a collection holds the
interpreter lock for as long as it walks the heap, and the GUI thread would wait for it.  The
diagram's badges are sorted out on the worker too (a stress bed has tens of thousands of findings).
"""
from __future__ import annotations

from collections.abc import Callable
from operator import is_
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.background import BackgroundJob, FirstFrame, Outcome, edited_meanwhile, unless_edited
from app.finding_marks import subject_marks
from topology.gc_pause import collector_paused
from topology.letting_go import let_go


def validate_unless_edited(document: Any, bed: Any, scenario: str | None = None,
                           publish: Callable[[list, dict, str], None] | None = None,
                           stages: tuple[float, float] = (0.5, 2.0)) -> tuple[list, dict]:
    """On the worker: the findings of `bed` and the diagram's badges of them (for `scenario`, as the
    canvas counts them), or EditedMeanwhile when an edit ran while they were worked out (whatever
    went wrong then is the edit's doing).  `publish(findings, badges, progress)`: handed the findings
    of the rules done so far while the rest run, first after `stages[0]` s, then every `stages[1]` s
    (`topology.validation.progress`), and only while no edit has run."""
    from app.diagram.findings import badges, drawn
    from topology.validation import validate
    from topology.validation.progress import Partial, validate_in_stages
    before = document.edit_seq

    def partial(p: Partial) -> None:
        if publish is not None and document.edit_seq == before:
            publish(p.findings, badges(p.findings, *drawn(bed), scenario=scenario), f"{p.done} of {p.total} rules")

    def work() -> tuple[list, dict]:
        findings = validate(bed) if publish is None else \
            validate_in_stages(bed, partial, first_after_s=stages[0], every_s=stages[1])
        return findings, badges(findings, *drawn(bed), scenario=scenario)
    with collector_paused():
        return unless_edited(document, work)


def _kept(previous: list, result: tuple[list, dict]) -> tuple[list, dict]:
    """On the worker: findings equal to the ones shown come back as that very list, so the views
    see in a moment (identity, not 25,000 comparisons on the GUI thread) that an edit changed none.
    The equal list made here is let go of a piece at a time: dropped in one go, its 25,000 findings
    held the interpreter lock for 50 ms on the 5,000-device bed (topology.letting_go)."""
    findings, badges = result
    del result
    if findings != previous:
        return findings, badges
    scraps = [findings]
    del findings
    let_go(scraps)
    return previous, badges


def same_findings(shown: list, given: list) -> bool:
    """In a view, on the GUI thread: `given` holds the findings `shown` holds.  The validator hands
    findings equal to those it showed back as those very objects (`_kept`) and any others as new
    ones, so their identity says it: comparing the findings field by field up to the first
    that differs took tens of ms of the GUI thread per view after an edit on the 25,000 findings of
    the 5,000-device bed (a list of equal findings made elsewhere is then taken as another list)."""
    return shown is given or (len(shown) == len(given) and all(map(is_, shown, given)))


class _Partials(QObject):
    arrived = Signal(object)        # (revision, scenario, findings, badges, marks, progress), emitted on the worker


class LiveValidator(QObject):
    """`findings_changed` hands on the findings of the bed as it is now.  After an open (a reset) a
    big bed's first findings come while the rules still run: then `progress` says how far they are
    ("7 of 66 rules"), and the complete list follows; `progress` is "" whenever the list shown is
    complete.  After an edit the list shown stays until the complete new one is in."""
    findings_changed = Signal(object)     # list[Finding]
    failed = Signal(str)

    DEBOUNCE_MS = 250
    # after an open: the first findings once this much time has gone and a rule found something,
    # then the findings so far this often until the complete list is in
    FIRST_FINDINGS_S, MORE_FINDINGS_S = 0.5, 2.0

    def __init__(self, document: Any, parent: QObject | None = None):
        super().__init__(parent or document)
        self.document = document
        self.findings: list[Any] = []
        self.badges: dict[str, Any] = {}      # device id -> Badge, made on the worker ...
        self.badges_scenario: str | None = None   # ... counting this scenario's findings (None: the reference's)
        self.marks: dict[str, tuple[str, list[str]]] = {}   # the component tree's markers of `findings`
        self.revision_shown = -1       # the revision whose complete findings are listed
        self.revision_listed = -1      # ... whose findings are listed, complete or so far (`progress`)
        self.progress = ""
        self._opened = False            # the bed was opened (reset) and its complete findings are not in yet
        self._partials = _Partials(self)
        self._partials.arrived.connect(self._partial)
        self._job = BackgroundJob(self, name="live-validation", prepare=self._prepare,
                                  debounce_ms=self.DEBOUNCE_MS, current_revision=lambda: self.document.revision,
                                  waits_for=FirstFrame.of(document), turn=0)
        self._job.result.connect(self._finished)
        document.changed.connect(lambda _ids: self._job.request())
        document.reset.connect(self._opened_now)

    def _prepare(self):
        doc, bed = self.document, self.document.bed
        # the badges for the scenario the views show now (the canvas counts "*", every scenario's,
        # until someone picks one): sorting 28,000 findings into badges on the GUI thread took 0.1 s
        choice = getattr(doc, "scenario", None)
        scenario = (choice.value if choice is not None else "") or None
        previous, previous_marks = self.findings, self.marks
        revision, relay, staged = doc.revision, self._partials.arrived, self._opened

        def publish(findings: list, badges: dict, progress: str) -> None:
            try:
                relay.emit((revision, scenario, findings, badges, subject_marks(findings), progress))
            except RuntimeError:        # the window went away while this ran: nobody waits for it
                pass

        def work() -> tuple:
            findings, badges = _kept(previous, validate_unless_edited(
                doc, bed, scenario, publish if staged else None, (self.FIRST_FINDINGS_S, self.MORE_FINDINGS_S)))
            return scenario, (findings, badges), previous_marks if findings is previous else subject_marks(findings)
        return revision, work

    def run_now(self) -> None:
        self._job.run_now()

    def _opened_now(self) -> None:
        self._opened = True
        self.run_now()

    def _partial(self, item: tuple) -> None:
        revision, scenario, findings, badges, marks, progress = item
        if revision != self.document.revision or revision == self.revision_shown:
            return                      # another bed's, or the complete list is in already
        self.findings, self.badges, self.badges_scenario, self.progress = findings, badges, scenario, progress
        self.marks = marks
        self.revision_listed = revision
        self.findings_changed.emit(findings)

    @property
    def busy(self) -> bool:
        """A validation is under way (a big canvas's build gives way to it: widgets/canvas/building.py)."""
        return self._job.busy

    def _finished(self, outcome: Outcome) -> None:
        if outcome.error:
            if edited_meanwhile(outcome):
                return
            self.progress, self._opened = "", False
            self.failed.emit(f"validation failed: {outcome.error}")
            return
        self.badges_scenario, (self.findings, self.badges), self.marks = outcome.value
        self.revision_shown = self.revision_listed = outcome.revision
        self.progress, self._opened = "", False
        self.findings_changed.emit(self.findings)

    def current_findings(self) -> list:
        """The findings of the bed as it is now: the live result when it is in, else a validation
        done here and now (a print, a PDF or a run must not go out with the last revision's)."""
        if self.revision_shown == self.document.revision:
            return list(self.findings)
        from topology.validation import validate
        return validate(self.document.bed)

    def shutdown(self) -> None:
        """The window is closing: drop queued work and let a running validation finish."""
        self._job.shutdown(30000)

    def wait(self, msecs: int = 5000) -> bool:
        """Tests and printing: block until the queued validation is done."""
        return self._job.wait(msecs)
