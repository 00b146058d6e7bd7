"""VM placement: hosts as cards with their VMs as chips, per scenario (the cards, chips and
load bars are in widgets/placement_cards.py).

Drag a VM chip onto another host to move it in the chosen scenario (one undoable
`place_vm` edit); mark a host failed (one `mark_failed` edit) and the view shows where its
VMs restart — `Context.placement`, the same failover the CAP rules check — and which VMs
have nowhere to go.  Each card carries live load bars: RAM used against RAM less the
policy reserve, vCPUs against hardware threads and the policy's vCPU-per-thread limit,
green / amber / red.  Everything is redrawn from the model on every change.

Only the cards in sight are built (`CardShelf`): the board is as wide as every card side by
side, and scrolling builds the cards it brings into view and drops those far out of it, so a
bed of 4,000 hosts opens its placement as fast as one of 10.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from PySide6.QtCore import QEvent, QPoint, QRect
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from topology import placement_ops as ops
from topology.unknown import stated
from widgets.placement_cards import BOARD_STYLE, CARD_WIDTH, HostCard, VmChip

MARGIN, GAP = 8, 12
STEP = CARD_WIDTH + GAP         # from one card's left edge to the next
KEEP_SLOTS = 2                  # cards built beyond each side of the view (a drag reaches them)


class CardShelf(Mapping):
    """The host cards in board order, by host id.  Every host of the placement is a key; its
    card is built when it comes into view or is asked for (`shelf[host]`)."""

    def __init__(self, view: PlacementView):
        self._view = view
        self.order: list[str] = []
        self.slot: dict[str, int] = {}
        self.built: dict[str, HostCard] = {}

    def __getitem__(self, host: str) -> HostCard:
        card = self.built.get(host)
        if card is None:
            if host not in self.slot:
                raise KeyError(host)
            card = self._view._build_card(host)
        return card

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, host: object) -> bool:
        return host in self.slot


class PlacementView(QWidget):
    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self._stale = True
        self.scenario_id: str | None = None
        self.cards = CardShelf(self)
        self._signatures: dict[str, tuple] = {}
        self._vms: dict = {}
        self.stopped_card: QFrame | None = None
        self.loads: dict[str, dict] = {}
        self.outcome: ops.Outcome | None = None
        self.lost: dict[str, str] = {}      # VM -> why it runs without its storage in the scenario
        self._drop_target: HostCard | None = None
        self._dragged = ""

        self.scenario_combo = QComboBox()
        self.scenario_combo.setObjectName("scenarioCombo")
        self.scenario_combo.setMinimumContentsLength(28)
        self.scenario_combo.currentIndexChanged.connect(self._scenario_chosen)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setObjectName("placementSummary")
        top = QHBoxLayout()
        top.addWidget(QLabel("Scenario:"))
        top.addWidget(self.scenario_combo)
        top.addWidget(QLabel("Drag a VM onto another host to move it in this scenario."), 1)

        self.board = QWidget()          # the cards sit on it side by side, placed by slot
        self.board.setObjectName("placementBoard")
        self.board.setStyleSheet(BOARD_STYLE)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.board)
        self.scroll.horizontalScrollBar().valueChanged.connect(lambda _v: self._fill_view())
        self.scroll.viewport().installEventFilter(self)
        self._card_height = 0

        self.message = QLabel()
        self.message.setObjectName("placementMessage")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.message)

        self.ghost = QLabel(self)
        self.ghost.setStyleSheet("background: #fff4e0; border: 1px solid #ef6c00; border-radius: 4px; "
                                 "padding: 3px 6px;")
        self.ghost.hide()

        document.changed.connect(lambda _ids: self._model_changed())
        document.reset.connect(self._reset)
        choice = getattr(document, "scenario", None)
        if choice is not None:
            choice.changed.connect(self._follow_current)
        selection.changed.connect(lambda _ids: self._mark_selected())
        from app.configuration_choice import ConfigurationChoice
        self.configuration = ConfigurationChoice.of(document) if hasattr(document, "revision") else None
        if self.configuration is not None:
            self.configuration.changed.connect(lambda _name: self._model_changed())
        # drawn when first shown: a hidden tab costs nothing at start-up

    # ------------------------------------------------------------------ model -> view
    def shown_bed(self):
        """The bed as the chosen configuration has it (its hosts out of use gone, its VM sizes);
        moves are still edits of the bed itself, by id."""
        view = self.configuration.view() if self.configuration is not None else None
        return view if view is not None else self.document.bed

    def _model_changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def _reset(self) -> None:
        self.scenario_id = None
        self._model_changed()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def _scenario_entries(self) -> list[tuple[str, str | None]]:
        bed = self.document.bed
        out: list[tuple[str, str | None]] = []
        if not any(s.reference for s in bed.scenarios):
            out.append(("reference placement (each VM's host)", None))
        for s in sorted(bed.scenarios, key=lambda s: not s.reference):
            bits = ["reference"] if s.reference else []
            if s.failed:
                bits.append(f"{', '.join(s.failed)} failed")
            out.append((s.id + (f" ({'; '.join(bits)})" if bits else ""), s.id))
        return out

    def refresh(self) -> None:
        self._stale = False
        entries = self._scenario_entries()
        ids = [sid for _, sid in entries]
        if self.scenario_id not in ids:
            self.scenario_id = ids[0] if ids else None
        self.scenario_combo.blockSignals(True)
        self.scenario_combo.clear()
        for label, sid in entries:
            self.scenario_combo.addItem(label, sid)
        self.scenario_combo.setCurrentIndex(ids.index(self.scenario_id) if self.scenario_id in ids else 0)
        self.scenario_combo.blockSignals(False)
        self._build_cards()

    def _scenario_chosen(self, index: int) -> None:
        self.scenario_id = self.scenario_combo.itemData(index)
        self._build_cards()
        self._publish()

    def show_scenario(self, scenario_id: str | None) -> None:
        self.scenario_id = scenario_id
        self.refresh()
        self._publish()

    def _publish(self) -> None:
        """The scenario shown here is the one every view shows."""
        choice = getattr(self.document, "scenario", None)
        if choice is not None:
            choice.set(self.scenario_id)

    def _follow_current(self, value: str) -> None:
        """Another view chose a scenario: show it, or the reference placement for the reference
        configuration (all scenarios at once is no placement: keep the one shown)."""
        ids = [sid for _, sid in self._scenario_entries()]
        if value == "*":
            return
        if value == "":
            wanted = None if None in ids else next((s.id for s in self.document.bed.scenarios if s.reference), None)
        else:
            wanted = value
        if wanted in ids and wanted != self.scenario_id:
            self.scenario_id = wanted
            self._stale = True
            if self.isVisible():
                self.refresh()

    def _clear_board(self) -> None:
        for card in self.cards.built.values():
            card.hide()
            card.deleteLater()
        if self.stopped_card is not None:
            self.stopped_card.hide()
            self.stopped_card.deleteLater()
        self.cards = CardShelf(self)
        self._signatures = {}
        self.stopped_card = None
        self._place_board()

    def _plan(self) -> list[tuple[str, tuple]]:
        """(host, what its card shows) for every host card, from the model."""
        bed = self.shown_bed()
        o = self.outcome
        servers = {s.id: s for s in bed.servers}
        went: dict[str, list[str]] = {}
        for vm_id, origin in {**o.moved, **o.failed_over}.items():
            if origin in o.failed:
                went.setdefault(origin, []).append(f"{vm_id} → {o.placement[vm_id]}")
        policy = (bed.policy.memory_reserve_gb, bed.policy.vcpu_per_thread)
        plan = []
        for host, load in self.loads.items():
            s = servers[host]
            threads = load["threads"]
            ram = stated(s.memory_gb)
            detail = " · ".join(x for x in (
                s.model, f"{ram:g} GB RAM" if ram is not None else "RAM not stated",
                f"{threads} threads" if threads else "threads not stated") if x)
            failed_note = ()
            if load["failed"]:
                gone = went.get(host, [])
                stuck = [v for v, why in o.stranded.items() if f"failed {host}" in why]
                lines = ["<b style='color:#c62828'>FAILED</b>"]
                if gone:
                    lines.append(f"{len(gone)} of its VMs now run elsewhere:<br>" + "<br>".join(gone))
                if stuck:
                    lines.append(f"<span style='color:#c62828'>{len(stuck)} VM(s) have nowhere to go: "
                                 f"{', '.join(stuck)}</span>")
                if not gone and not stuck:
                    lines.append("no VMs ran here")
                failed_note = tuple(lines)
            chips = []
            for vm_id in load["vms"]:
                origin = o.failed_over.get(vm_id) or o.moved.get(vm_id)
                note = f"↪ from {origin} (failed)" if origin in o.failed else (f"moved from {origin}" if origin else "")
                if vm_id in self.lost:
                    note = "; ".join(x for x in (note, f"no storage: {self.lost[vm_id]}") if x)
                chips.append((vm_id, note))
            numbers = (load["memory_used_gb"], load["memory_gb"], load["usable_memory_gb"], load["vcpu"], threads)
            plan.append((host, (detail, load["failed"], numbers, policy, failed_note, tuple(chips))))
        return plan

    def _make_card(self, host: str, spec: tuple, vms: dict) -> HostCard:
        detail, failed, _numbers, _policy, failed_note, chips = spec
        card = HostCard(self, host, self.board)
        card.set_failed(failed)
        card.detail.setText(detail)
        self._set_bars(card, self.loads[host])
        if failed_note:
            note = QLabel("<br>".join(failed_note))
            note.setObjectName("failedNote")
            note.setWordWrap(True)
            card.layout_.addWidget(note)
        for vm_id, text in chips:
            chip = VmChip(self, vms[vm_id], text, parent=card)
            card.chips.append(chip)
            card.layout_.addWidget(chip)
        card.layout_.addStretch(1)
        return card

    # ------------------------------------------------------------------ the board: cards in view only
    def _build_card(self, host: str) -> HostCard:
        """Build one host's card in its slot (it comes into view, or a caller asks for it)."""
        card = self._make_card(host, self._signatures[host], self._vms)
        self.cards.built[host] = card
        natural = card.sizeHint().height()
        if natural > self._card_height:         # taller than the estimate: the board grows for it
            self._card_height = natural
            self._place_board()
        card.setGeometry(self._slot_rect(self.cards.slot[host]))
        card.show()      # at once, not on the next event-loop turn: a grab or a drag right after sees it
        self._mark_chips(card.chips)
        return card

    def _slot_rect(self, slot: int) -> QRect:
        return QRect(MARGIN + slot * STEP, MARGIN, CARD_WIDTH, self.board.height() - 2 * MARGIN)

    def _estimated_height(self, spec: tuple) -> int:
        """A card's height without building it: its head, its failure note and its chips."""
        _detail, _failed, _numbers, _policy, failed_note, chips = spec
        fm = QFontMetrics(self.font())
        line = fm.height()
        height = 150 + line * 2 * len(failed_note)      # title, detail, two bars; a note's lines wrap
        for _vm, note in chips:
            words = len(note) * fm.averageCharWidth() // max(1, CARD_WIDTH - 60) + 1 if note else 0
            height += 8 + line * (1 + words) + 2 + 6
        return height

    def _place_board(self) -> None:
        """The board as wide as every slot and as tall as the tallest card (or the view)."""
        slots = len(self.cards) + (1 if self.stopped_card is not None else 0)
        width = 2 * MARGIN + max(0, slots * STEP - GAP)
        viewport = self.scroll.viewport().size()
        height = max(viewport.height(), self._card_height + 2 * MARGIN)
        if self.board.size() != QRect(0, 0, width, height).size():
            self.board.resize(width, height)
            for host, card in self.cards.built.items():
                card.setGeometry(self._slot_rect(self.cards.slot[host]))
            if self.stopped_card is not None:
                self.stopped_card.setGeometry(self._slot_rect(len(self.cards)))

    def _fill_view(self) -> None:
        """Build the cards in view (and a few beside it); drop those far out of it."""
        if not self.cards:
            return
        left = self.scroll.horizontalScrollBar().value()
        first = max(0, (left - MARGIN) // STEP - KEEP_SLOTS)
        last = min(len(self.cards) - 1, (left + self.scroll.viewport().width()) // STEP + KEEP_SLOTS)
        for host in [h for h in self.cards.built if not first - KEEP_SLOTS <= self.cards.slot[h] <= last + KEEP_SLOTS]:
            if self._drop_target is not None and self._drop_target.host_id == host:
                continue        # the card a drag is over stays
            card = self.cards.built.pop(host)
            card.hide()
            card.deleteLater()
        for slot in range(first, last + 1):
            host = self.cards.order[slot]
            if host not in self.cards.built:
                self._build_card(host)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.scroll.viewport() and event.type() == QEvent.Type.Resize:
            self._place_board()
            self._fill_view()
        return super().eventFilter(watched, event)

    def _build_cards(self) -> None:
        """Bring the board in line with the model, rebuilding only the cards in view that changed
        (a drag touches two hosts; a 100-host board must not be rebuilt for it)."""
        bed = self.shown_bed()
        try:
            self.outcome = ops.outcome(bed, self.scenario_id)
        except ops.PlacementRefused as exc:
            self._clear_board()
            self.summary.setText(str(exc))
            return
        self.loads = ops.host_loads(bed, self.scenario_id, self.outcome)
        self.lost = ops.lost_storage(bed, self.scenario_id, self.outcome)
        self._vms = vms = {v.id: v for v in bed.vms}
        plan = self._plan()
        if [h for h, _ in plan] != self.cards.order:
            self._clear_board()
            self.cards.order = [h for h, _ in plan]
            self.cards.slot = {h: i for i, h in enumerate(self.cards.order)}
            self._signatures = dict(plan)
        else:
            for host, spec in plan:
                if self._signatures.get(host) == spec:
                    continue
                self._signatures[host] = spec
                old = self.cards.built.pop(host, None)
                if old is not None:         # in view: built again now; out of view: when it comes in
                    old.hide()
                    old.deleteLater()
                    self._build_card(host)
        self._card_height = max((self._estimated_height(spec) for _h, spec in plan), default=0)
        self._update_stopped_card(vms)
        self._place_board()
        self._fill_view()
        self._mark_selected()
        self._summarise()

    def _set_bars(self, card: HostCard, load: dict) -> None:
        policy = self.document.bed.policy
        used, total, usable = load["memory_used_gb"], load["memory_gb"], load["usable_memory_gb"]
        unstated = load.get("memory_unstated") or []
        if unstated:        # the VMs whose memory is not stated count as no number, not as 0 GB
            of = f" of {total:g} GB" if total is not None else " (host RAM not stated)"
            card.ram_bar.set_load(None, f"RAM {used:g} GB + {len(unstated)} VM(s) not stated{of}",
                                  f"memory not stated for {', '.join(unstated)}: the total is not known")
        elif total is None:
            card.ram_bar.set_load(None, f"RAM {used:g} GB (host RAM not stated)")
        else:
            fraction = used / usable if usable else (1.5 if used else 0.0)
            card.ram_bar.set_load(fraction, f"RAM {used:g} of {total:g} GB ({usable:g} usable)",
                                  f"VM memory {used:g} GB; host {total:g} GB less the policy's "
                                  f"{policy.memory_reserve_gb:g} GB reserve = {usable:g} GB (CAP-001)")
        vcpu, threads, cores = load["vcpu"], load["threads"], load.get("cores")
        if not threads:
            on = f", {cores} cores, threads not stated" if cores else ", threads not stated"
            card.cpu_bar.set_load(None, f"vCPU {vcpu}{on}", f"{vcpu} vCPU; the host's threads per core are not "
                                  "stated, so its hardware threads are not known (CAP-002 could not judge)")
        else:
            limit = threads * policy.vcpu_per_thread
            card.cpu_bar.set_load(vcpu / limit if limit else None,
                                  f"vCPU {vcpu} on {threads} threads ({vcpu / threads:.2f}/thread)",
                                  f"{vcpu} vCPU on {threads} hardware threads; the policy allows "
                                  f"{policy.vcpu_per_thread:g} per thread = {limit:g} (CAP-002)")

    def _mark_selected(self) -> None:
        chips = [c for card in self.cards.built.values() for c in card.chips]
        if self.stopped_card is not None:
            chips += self.stopped_card.findChildren(VmChip)
        self._mark_chips(chips)

    def _mark_chips(self, chips) -> None:
        ids = self.selection.ids
        for chip in chips:
            on = chip.vm_id in ids
            if chip.selected != on:
                chip.selected = on
                chip.update()

    def _update_stopped_card(self, vms: dict) -> None:
        stranded = tuple(self.outcome.stranded.items())
        if self.stopped_card is not None and getattr(self.stopped_card, "signature", None) == stranded:
            return
        if self.stopped_card is not None:
            self.stopped_card.hide()
            self.stopped_card.deleteLater()
            self.stopped_card = None
        if not stranded:
            return
        card = QFrame(self.board)
        card.setObjectName("stoppedCard")
        card.setFixedWidth(CARD_WIDTH)
        card.signature = stranded
        lay = QVBoxLayout(card)
        title = QLabel(f"<b style='color:#c62828'>Not running: {len(stranded)} VM(s) have nowhere to go</b>")
        title.setWordWrap(True)
        lay.addWidget(title)
        for vm_id, why in stranded:
            lay.addWidget(VmChip(self, vms[vm_id], why, stopped=True, parent=card))
        lay.addStretch(1)
        self.stopped_card = card
        self._card_height = max(self._card_height, card.sizeHint().height())
        self._place_board()
        card.setGeometry(self._slot_rect(len(self.cards)))
        card.show()

    def _summarise(self) -> None:
        o = self.outcome
        running = len(o.placement)
        up = [h for h, load in self.loads.items() if not load["failed"]]
        parts = [f"{running} VMs on {len(up)} of {len(self.loads)} hosts"]
        if o.failed:
            away = {v for v, h in {**o.moved, **o.failed_over}.items() if h in o.failed}
            parts.append(f"failed: {', '.join(o.failed)}")
            if any(h in self.loads for h in o.failed):
                parts.append(f"{len(away)} of their VMs run elsewhere")
                parts.append(f"{len(o.stranded)} with nowhere to go" if o.stranded else "every VM has a host")
        if self.lost:       # a failed array: the VMs keep their hosts and lose their disks
            parts.append(f"{len(self.lost)} VM(s) lost their storage")
        over = [h for h, load in self.loads.items()
                if load["usable_memory_gb"] is not None and load["memory_used_gb"] > load["usable_memory_gb"]]
        if over:
            parts.append(f"over RAM: {', '.join(over)}")
        if not self.loads:
            parts = ["This bed has no hypervisor hosts and no VMs to place."]
        self.summary.setText(" · ".join(parts))

    # ------------------------------------------------------------------ actions
    def say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #b3261e;" if error else "color: #1b5e20;")
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 8000)

    def move_vm(self, vm_id: str, host_id: str) -> bool:
        try:
            edit = ops.place_vm(self.document.bed, vm_id, host_id, self.scenario_id)
        except ops.PlacementRefused as exc:
            self.say(f"Not moved: {exc}.", error=True)
            return False
        self.document.apply(edit)
        self.say(f"Done: {edit.text}.")
        return True

    def toggle_failed(self, host_id: str, failed: bool) -> None:
        bed = self.document.bed
        try:
            target = ops.failure_scenario(bed, self.scenario_id)
            existing = next((s for s in bed.scenarios if s.id == target), None)
            if failed and existing is not None and host_id in existing.failed:
                self.show_scenario(target)       # the bed already has that failure: show it
                self.say(f"{host_id} is failed in scenario {target}: showing it.")
                return
            edit = ops.mark_failed(bed, self.scenario_id, host_id, failed)
        except ops.PlacementRefused as exc:
            self.say(f"Not done: {exc}.", error=True)
            self.refresh()
            return
        self.scenario_id = target
        self.document.apply(edit)
        if not self.isVisible():
            self.refresh()
        self._publish()
        self.say(f"Done: {edit.text}.")

    # ------------------------------------------------------------------ dragging
    def card_at(self, global_pos: QPoint) -> HostCard | None:
        for card in self.cards.built.values():      # a card out of view is not under the pointer
            if QRect(card.mapToGlobal(QPoint(0, 0)), card.size()).contains(global_pos):
                return card
        return None

    def drag_started(self, chip: VmChip) -> None:
        self._dragged = chip.vm_id
        self.ghost.setText(f"{chip.vm_id}")
        self.ghost.adjustSize()
        self.ghost.raise_()
        self.ghost.show()

    def drop_refusal(self, vm_id: str, host_id: str) -> str | None:
        """Why dropping the VM on the host would be refused; None when the drop would move it.
        The drop itself asks the same question (ops.place_vm), so a card shown as a target
        never refuses the drop."""
        if host_id == (self.outcome.placement.get(vm_id) if self.outcome else None):
            return f"{vm_id} already runs on {host_id}"
        try:
            ops.place_vm(self.document.bed, vm_id, host_id, self.scenario_id)
        except ops.PlacementRefused as exc:
            return str(exc)
        return None

    def drag_moved(self, global_pos: QPoint) -> None:
        self.ghost.move(self.mapFromGlobal(global_pos) + QPoint(12, 8))
        target = self.card_at(global_pos)
        if target is not self._drop_target:
            if self._drop_target is not None:
                self._drop_target.set_drop_target(False)
            refusal = self.drop_refusal(self._dragged, target.host_id) if target is not None else None
            if target is not None:
                target.set_drop_target(True, refusal)
            self.ghost.setText(self._dragged + (f"  ✕ {refusal}" if refusal else
                                                f"  → {target.host_id}" if target is not None else ""))
            self.ghost.adjustSize()
            self._drop_target = target

    def drag_finished(self, vm_id: str, global_pos: QPoint) -> None:
        self.ghost.hide()
        if self._drop_target is not None:
            self._drop_target.set_drop_target(False)
            self._drop_target = None
        target = self.card_at(global_pos)
        if target is None:
            self.say("Drop the VM on a host card to move it.", error=True)
            return
        if target.host_id == (self.outcome.placement.get(vm_id) if self.outcome else None):
            return   # dropped where it already runs
        self.move_vm(vm_id, target.host_id)      # a refusal says why (drop_refusal showed it already)
