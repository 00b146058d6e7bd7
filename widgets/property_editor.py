"""The property editor: the selected component as a form generated from the model's field metadata.

Fields come from `topology.fileformat.plan(cls)`: a choice becomes a combo box, a number a
spin box that knows its minimum, a flag a check box, text a line edit, a list of choices a
tick menu, a free list a small list editor, a nested record (the CPU) a group; the field
widgets themselves are in widgets/forms/.  Every committed change is exactly one
`document.apply(...)`: a SetField, or for a name the rename edit that also rewrites every
reference (topology.rename_ops).  Input the model cannot take is refused with a message
next to the field, and nothing changes.  The form reads the model again when the document
says the shown component was touched, so undo and redo show up here too.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from topology.address_entry import address_problem, needs_prefix
from topology.edits import SetField
from topology.fileformat import plan
from topology.index import BedIndex
from topology.model import AccessSpec as IoMix
from topology.model import ArrayGroup, Bed, Criterion, HostAccess, LocalDisk, Switch, Workload, WorkloadLevel
from topology.names import field_problem
from topology.rename_ops import Located, RenameError, locate, ref_candidates, rename
from topology.unknown import MARKER, NOT_STATED, accepts_not_stated
from topology.workload_tools import TOOLS
from topology.xml_chars import NOT_XML, problem_text
from widgets.forms.access_box import ACCESS_HIDDEN, AccessBox
from widgets.forms.binding import FieldBinding, NestedRecord
from widgets.forms.fields import BoolField, ChoiceCombo, NoteField, NumberBox, RefCombo, TextField
from widgets.forms.group_members import GroupMembers
from widgets.forms.keys import watch_keys
from widgets.forms.labels import configuration_words, edit_words, field_label
from widgets.forms.list_fields import ChoiceListField, MappingField, TextListField
from widgets.forms.not_stated import install_marker
from widgets.forms.parameters_field import ParametersField
from widgets.forms.record_table import RecordTable
from widgets.forms.summaries import summary_html
from widgets.forms.switch_ports_box import SwitchPortsBox
from widgets.forms.values import NOT_SET, FieldError, format_number, parse_number, parse_scalar

HIDDEN_FIELDS = {"x", "y", "format_version"}     # canvas positions are set by dragging
# what a switch port does not have (a host port's address, binding and offloads)
SWITCH_PORT_HIDDEN = {"address", "wwpn", "bound_to", "offloads", "modes"}
MULTILINE_FIELDS = {"note", "description", "source"}
REACHABLE_KINDS = ("server", "VM", "storage array", "switch")     # the components an access entry names
TABLE_RECORDS = (IoMix, Criterion, WorkloadLevel, LocalDisk)        # small records edited as a table
TABLE_LABELS = {IoMix: "I/O mix", Criterion: "Pass criteria", WorkloadLevel: "Machines per level"}
_KIND_TITLES = {"VM": "VM", "virtual NIC": "Virtual NIC"}


def _is_optional(fp: Any) -> bool:
    return not fp.required and fp.default is None


class PropertyEditor(QWidget):
    """The selected component as a form; every committed change is one document edit."""

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self._loc: Located | None = None
        self._subject: str | None = None
        self._mode = ""                      # "component", "bed", "many", "missing"
        self._bindings: list[FieldBinding] = []
        self._groups: list[NestedRecord] = []
        self._index_cache: tuple[int, BedIndex] | None = None

        self.title = QLabel(self)
        self.title.setObjectName("propertyTitle")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle = QLabel(self)
        self.subtitle.setWordWrap(True)
        self.subtitle.setStyleSheet("color: palette(mid);")
        self.subtitle.linkActivated.connect(lambda s: self.selection.set([s]))
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.scroll, 1)

        selection.changed.connect(self._selection_changed)
        document.changed.connect(self._document_changed)
        document.reset.connect(lambda: self.rebuild(after_reset=True))
        from app.configuration_choice import ConfigurationChoice
        self.configuration = ConfigurationChoice.of(document) if hasattr(document, "revision") else None
        if self.configuration is not None:     # what the chosen configuration sets on the component shown
            self.configuration.changed.connect(lambda _n: self._mode == "component" and self._show_header())
        self.rebuild()

    # ------------------------------------------------------------------ public (views, tests)
    @property
    def shown_subject(self) -> str | None:
        """The subject id on the form ('' for the bed's own settings, None for nothing)."""
        return self._subject

    def editor(self, path: str) -> QWidget:
        """The editor of a field by its path on the form: 'memory_gb', 'cpu.sockets'."""
        return self._binding(path).editor

    def message(self, path: str) -> str:
        """The message shown next to a field ('' when the field is fine)."""
        b = self._binding(path)
        return b.message.text() if not b.message.isHidden() else ""

    def group_add_button(self, attr: str) -> QPushButton:
        return next(g.add for g in self._groups if g.fp.attr == attr)

    def _binding(self, path: str) -> FieldBinding:
        for b in self._bindings:
            if b.path == path:
                return b
        raise KeyError(f"no field {path!r} on the form (shown: {self._subject!r})")

    # ------------------------------------------------------------------ following the document
    def _selection_changed(self, ids: frozenset) -> None:
        if self._mode == "component" and set(ids) == {self._subject}:
            return                           # our own rename moved the selection along
        self.rebuild()

    def _document_changed(self, ids: set) -> None:
        if self._mode == "bed":
            self._load_all()
            return
        if self._mode == "missing":
            self.rebuild()                   # undo may bring the selected component back
            return
        if self._mode != "component" or self._loc is None:
            return
        loc = self._loc
        subject = loc.current_subject()
        found = locate(self.document.bed, subject)
        if found is None or found.obj is not loc.obj:
            self.rebuild()                   # deleted, or another object took the id
            return
        owners = {i.split(":", 1)[0] for i in ids}
        previous = self._subject
        if subject != previous:              # renamed (or a rename was undone): the selection follows
            self._loc, self._subject = found, subject
            self.selection.set((set(self.selection.ids) - {previous}) | {subject})
            self._show_header()
        if not ids or loc.owner in owners or (previous or "").split(":", 1)[0] in owners:
            self._load_all()
            self._show_header()

    def _load_all(self) -> None:
        for b in self._bindings:
            b.load()
        for g in self._groups:
            g.load()
        if self._mode == "component":
            self._refresh_summaries()

    # ------------------------------------------------------------------ building
    def rebuild(self, *, after_reset: bool = False) -> None:
        ids = self.selection.ids
        self._clear_form()
        bed = self.document.bed
        if after_reset and len(ids) == 1 and locate(bed, next(iter(ids))) is None:
            ids = frozenset()                # another bed was opened: the old selection means nothing here
        if len(ids) == 1:
            (subject,) = ids
            loc = locate(bed, subject)
            if loc is None:
                self._mode, self._loc, self._subject = "missing", None, None
                self.title.setText(subject)
                self.subtitle.setText("This id names nothing in the bed (it was removed or renamed).")
                self._finish_form(None)
                return
            self._mode, self._loc, self._subject = "component", loc, subject
            self._show_header()
            form = self._new_form()
            self._add_fields(form, lambda loc=loc: loc.obj, type(loc.obj), "", root=True)
            if loc.obj is loc.device and loc.kind in REACHABLE_KINDS:
                self._add_access(form)
            if isinstance(loc.obj, ArrayGroup):     # its members: the arrays that name it
                members = GroupMembers(self.document, lambda loc=loc: loc.obj, lambda s: self.selection.set([s]))
                form.insertRow(1, QLabel("Members"), members)
                self._summaries.append((None, None, members))
            self._finish_form(form)
        elif not ids:
            self._mode, self._loc, self._subject = "bed", None, ""
            self.title.setText("Test bed")
            self.subtitle.setText("Nothing is selected: these are the bed's own settings. "
                                  "Select a component on the canvas or in the component tree to edit it.")
            form = self._new_form()
            for attr, title in (("bed", "Description"), ("policy", "Validation policy")):
                fp = next(f for f in plan(Bed) if f.attr == attr)
                box = QGroupBox(title, self._form_host)
                inner = QFormLayout(box)
                self._tune(inner)
                self._add_fields(inner, lambda attr=attr: getattr(self.document.bed, attr), fp.inner, attr + ".",
                                 root=False)
                form.addRow(box)
            self._finish_form(form)
        else:
            self._mode, self._loc, self._subject = "many", None, None
            self.title.setText(f"{len(ids)} components selected")
            links = ", ".join(f'<a href="{escape(i)}">{escape(i)}</a>' for i in sorted(ids))
            self.subtitle.setText(f"Pick one to edit it: {links}")
            self._finish_form(None)
        self._load_all()

    def _show_header(self) -> None:
        loc = self._loc
        kind = _KIND_TITLES.get(loc.kind, loc.kind[:1].upper() + loc.kind[1:])
        self.title.setText(f"{kind} {loc.current_subject()}")
        parts = []
        if loc.obj is not loc.device:
            parts.append(f'of <a href="{escape(loc.device.id)}">{escape(loc.device.id)}</a>')
        if loc.detail:
            parts.append(escape(loc.detail))
        if loc.kind == "port":
            ref = loc.current_subject()
            ends = [lk.b if lk.a == ref else lk.a for lk in self.document.bed.links if ref in (lk.a, lk.b)]
            parts.append(f'cabled to <a href="{escape(ends[0])}">{escape(ends[0])}</a>' if ends else "not cabled")
        parts += configuration_words(self.configuration, loc.current_subject())
        self.subtitle.setText("; ".join(parts))
        self.subtitle.setVisible(bool(parts))

    def _clear_form(self) -> None:
        for b in self._bindings:
            b.editor.blockSignals(True)      # a field losing focus while it goes must not edit anything
        self._bindings, self._groups, self._summaries = [], [], []
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.subtitle.show()

    def _new_form(self) -> QFormLayout:
        self._form_host = host = QWidget()    # kept: the layout lives only as long as its widget
        column = QVBoxLayout(host)
        column.setContentsMargins(0, 0, 0, 0)
        fields = QWidget(host)
        form = QFormLayout(fields)
        form.setContentsMargins(0, 0, 4, 0)
        self._tune(form)
        column.addWidget(fields)
        column.addStretch(1)                 # spare height goes below the form, not between its rows
        return form

    @staticmethod
    def _tune(form: QFormLayout) -> None:
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setVerticalSpacing(4)

    def _finish_form(self, form: QFormLayout | None) -> None:
        host = self._form_host if form is not None else QWidget()
        self._form_host = None
        self.scroll.setWidget(host)

    def _add_fields(self, form: QFormLayout, holder: Callable[[], Any], cls: type, prefix: str, *,
                    root: bool) -> None:
        for fp in plan(cls):
            if fp.attr in HIDDEN_FIELDS or (cls is HostAccess and fp.attr in ACCESS_HIDDEN):
                continue
            label, unit = field_label(fp.attr)
            if fp.kind == "dc":
                self._add_group(form, holder, fp, label, prefix)
                continue
            if fp.kind == "list" and fp.inner[0] == "dc":
                if root and fp.attr == "ports" and isinstance(self._loc.obj, Switch):
                    self._add_switch_ports(form, holder)
                elif root and fp.inner[1] in TABLE_RECORDS:
                    table = RecordTable(self.document, holder, fp, self._owner)
                    form.addRow(QLabel(TABLE_LABELS.get(fp.inner[1], label)), table)
                    self._summaries.append((holder, fp, table))
                elif root:
                    self._add_summary(form, holder, fp, label)
                continue
            if self._switch_port and fp.attr in SWITCH_PORT_HIDDEN:
                continue
            if self._switch_port and fp.attr == "team":
                label = "LAG"
            editor = self._make_editor(fp, unit, holder)
            if editor is None:
                continue
            message = QLabel()
            message.setWordWrap(True)
            message.setStyleSheet("color: #c62828;")
            message.hide()
            cell = QWidget()
            column = QVBoxLayout(cell)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(1)
            binding = FieldBinding(holder, fp, editor, message, label, unit, prefix + fp.attr)
            column.addWidget(self._with_marker(binding) if accepts_not_stated(cls, fp) else editor)
            column.addWidget(message)
            binding.is_name = root and self._loc is not None and fp.attr == self._loc.name_attr
            tip = fp.meta.get("doc") or ""
            if binding.is_name:
                tip = (tip + "\n" if tip else "") + "Renaming also renames every reference to it."
            name_label = QLabel(label)
            name_label.setToolTip(tip)
            editor.setToolTip(tip)
            editor.committed.connect(lambda raw, b=binding: self._commit(b, raw))
            watch_keys(binding, self.document.undo_stack)
            form.addRow(name_label, cell)
            self._bindings.append(binding)

    def _with_marker(self, binding: FieldBinding) -> QWidget:
        """The editor with 'not stated' as one of its states (widgets/forms/not_stated.py)."""
        binding.marker = install_marker(binding.editor, binding.text_part(),
                                        lambda checked, b=binding: self._mark_not_stated(b, checked))
        return binding.editor

    def _mark_not_stated(self, binding: FieldBinding, checked: bool) -> None:
        obj = binding.holder()
        if obj is None:
            return
        if checked:
            text = f"Mark {edit_words(binding.label)} of {self._edit_subject()} as not stated"
            self._apply(SetField(obj, binding.attr, NOT_STATED, text=text, owner=self._owner()))
        elif binding.fp.required:           # no empty value to fall back to: a value must be typed
            binding.load()
            binding.show_error(f"type the {binding.label.lower()} to state it — still not stated")
        else:
            text = f"Clear {edit_words(binding.label)} of {self._edit_subject()}"
            self._apply(SetField(obj, binding.attr, binding.fp.default, text=text, owner=self._owner()))

    def _add_group(self, form: QFormLayout, holder: Callable[[], Any], fp: Any, label: str, prefix: str) -> None:
        cls = fp.inner
        box = QGroupBox(label)
        outer = QVBoxLayout(box)
        outer.setContentsMargins(6, 4, 6, 4)
        add = QPushButton(f"Add {label.lower()} details", box)
        add.setToolTip("Not stated yet")
        add.setEnabled(all(not f.required for f in plan(cls)))
        add.clicked.connect(lambda _=False, h=holder, fp=fp: self._set_group(h, fp, fp.inner()))
        remove = None
        if fp.default is None and not fp.required:
            remove = QToolButton(box, text=f"Remove {label} details",
                                 toolTip=f"Mark the {label} as not stated in the report")
            remove.clicked.connect(lambda _=False, h=holder, fp=fp: self._set_group(h, fp, None))
        body = QWidget(box)
        inner = QFormLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        self._tune(inner)
        self._add_fields(inner, lambda h=holder, a=fp.attr: getattr(h(), a) if h() is not None else None,
                         cls, prefix + fp.attr + ".", root=False)
        outer.addWidget(add)
        outer.addWidget(body)
        if remove is not None:
            outer.addWidget(remove, 0, Qt.AlignmentFlag.AlignRight)
        form.addRow(box)
        self._groups.append(NestedRecord(holder, fp, box, add, remove, body))

    def _set_group(self, holder: Callable[[], Any], fp: Any, value: Any) -> None:
        label = edit_words(field_label(fp.attr)[0])
        verb = "Add" if value is not None else "Clear"
        self._apply(SetField(holder(), fp.attr, value, text=f"{verb} {label} of {self._edit_subject()}",
                             owner=self._owner()))

    def _add_access(self, form: QFormLayout) -> None:
        box = AccessBox(self.document, lambda: self._loc.current_subject() if self._loc is not None else "")
        self._add_fields(box.fields, box.entry, HostAccess, "access.", root=False)
        form.insertRow(min(2, form.rowCount()), box)     # under its name and role, not below a long form
        self._summaries.append((None, None, box))

    def _add_summary(self, form: QFormLayout, holder: Callable[[], Any], fp: Any, label: str) -> None:
        text = QLabel()
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        text.linkActivated.connect(lambda s: self.selection.set([s]))
        text.setToolTip("Click a name to edit it")
        form.addRow(QLabel(label), text)
        self._summaries.append((holder, fp, text))

    def _add_switch_ports(self, form: QFormLayout, holder: Callable[[], Any]) -> None:
        box = SwitchPortsBox(self.document, holder)
        box.subject_clicked.connect(lambda s: self.selection.set([s]))
        form.addRow(QLabel("Ports"), box)
        self._summaries.append((holder, None, box))

    @property
    def _switch_port(self) -> bool:
        loc = self._loc
        return loc is not None and loc.kind == "port" and isinstance(loc.device, Switch)

    def _refresh_summaries(self) -> None:
        for holder, fp, label in self._summaries:
            if hasattr(label, "load"):       # the switch's ports, a table of records
                label.load()
                continue
            items = getattr(holder(), fp.attr)
            label.setText(summary_html(self.document.bed, self._loc, items) or "<i>none</i>")

    # ------------------------------------------------------------------ editors by field kind
    def _make_editor(self, fp: Any, unit: str, holder: Callable[[], Any]) -> QWidget | None:
        meta = fp.meta
        optional = _is_optional(fp)
        choices = meta.get("choices")
        ref = meta.get("ref")
        if isinstance(holder(), Workload) and fp.attr in ("tool", "parameters"):   # the tool's known words
            return (RefCombo(lambda: list(TOOLS), optional=False) if fp.attr == "tool" else
                    ParametersField(lambda h=holder: getattr(h(), "tool", "")))
        if fp.kind == "str":
            if choices:
                return ChoiceCombo(tuple(choices))
            if ref:
                return RefCombo(lambda ref=ref, h=holder: self._candidates(ref, h), optional=not fp.required)
            if fp.attr in MULTILINE_FIELDS:
                return NoteField()
            return TextField()
        if fp.kind in ("int", "float"):
            return NumberBox(integer=fp.kind == "int", minimum=meta.get("minimum"), optional=optional, unit=unit)
        if fp.kind == "bool":
            return BoolField(optional=optional)
        if fp.kind == "list":
            inner_kind = fp.inner[0]
            if choices:
                return ChoiceListField(lambda c=tuple(choices): list(c))
            if ref and ref not in ("port", "component", "target"):
                return ChoiceListField(lambda ref=ref, h=holder: self._candidates(ref, h))
            parse = {"int": lambda t: int(float(t)), "float": float}.get(inner_kind, parse_scalar)
            if inner_kind == "str":
                parse = str.strip
            return TextListField(parse)
        if fp.kind == "dict":
            return MappingField()
        if fp.kind == "any":
            return TextField()
        return None

    def _index(self) -> BedIndex:
        rev = self.document.revision
        cache = self._index_cache
        if cache is None or cache[0] != rev or cache[1].bed is not self.document.bed:
            self._index_cache = (rev, BedIndex(self.document.bed))
        return self._index_cache[1]

    def _candidates(self, kind: str, holder: Callable[[], Any]) -> list[str]:
        array = self._loc.array if self._loc is not None else None
        return ref_candidates(self.document.bed, kind, array, self._index())

    # ------------------------------------------------------------------ committing
    def _edit_subject(self) -> str:
        return self._subject or "the bed"

    def _owner(self) -> str:
        return self._loc.owner if self._loc is not None else ""

    def _commit(self, binding: FieldBinding, raw: Any) -> None:
        obj = binding.holder()
        if obj is None:
            return
        try:
            value = self._parse(binding, raw)
        except FieldError as exc:
            binding.show_error(self._refusal(exc, getattr(obj, binding.attr)))
            return
        # what the loader would refuse on open is refused here (a name: the rename checks it)
        problem = None if value is NOT_STATED or binding.is_name else field_problem(type(obj), binding.attr, value)
        if problem is not None:
            binding.show_error(self._refusal(FieldError(f"{problem[0]} — {problem[1]}"), getattr(obj, binding.attr)))
            return
        if binding.is_name:
            loc = self._loc
            if value == getattr(obj, binding.attr):
                binding.load()
                return
            try:
                edit = rename(self.document.bed, loc.current_subject(), loc.subject_with(value))
            except RenameError as exc:
                binding.show_error(self._refusal(exc, getattr(obj, binding.attr)))
                return
            self._apply(edit)
            return
        if value == getattr(obj, binding.attr):
            binding.load()                   # e.g. '8 GB' typed where 8 was: show it the way it is stored
            return
        text = f"Set {edit_words(binding.label)} of {self._edit_subject()}"
        self._apply(SetField(obj, binding.attr, value, text=text, owner=self._owner()))

    @staticmethod
    def _refusal(exc: Exception, current: Any) -> str:
        """The reason, and that the stored value stays (Enter on the old text, or Undo, is not needed)."""
        if current is None or current == "":
            kept = "not stated"
        elif isinstance(current, (int, float)) and not isinstance(current, bool):
            kept = format_number(current)
        elif isinstance(current, list):
            kept = ", ".join(map(str, current)) or "empty"
        else:
            kept = str(current)
        return f"{exc} — still {kept}"

    def _apply(self, edit: Any) -> None:
        self.document.apply(edit)

    def _parse(self, binding: FieldBinding, raw: Any) -> Any:
        fp, meta = binding.fp, binding.fp.meta
        kind = fp.kind
        if binding.marker is not None and isinstance(raw, str) and raw.strip() == MARKER:
            return NOT_STATED               # typed as the file writes it
        if kind in ("int", "float"):
            return parse_number(str(raw), integer=kind == "int", minimum=meta.get("minimum"),
                                optional=_is_optional(fp), unit=binding.unit)
        if kind == "str":
            text = str(raw)
            if binding.attr not in MULTILINE_FIELDS:
                text = text.strip()
            if fp.required and not text:
                raise FieldError("a value is required")
            if NOT_XML.search(text):            # the file would not load again, nor any export open
                raise FieldError(problem_text(text)[0])
            choices = meta.get("choices")
            if choices and text not in choices:
                raise FieldError(f"{text!r} is not one of: {', '.join(c or NOT_SET for c in choices)}")
            ref = meta.get("ref")
            if ref and text and text not in self._candidates(ref, binding.holder):
                near = difflib.get_close_matches(text, self._candidates(ref, binding.holder), 1)
                hint = f" — did you mean {near[0]!r}?" if near else ""
                raise FieldError(f"{text!r} does not name a {ref.replace('_', ' ')} in this bed{hint}")
            pattern = meta.get("pattern")
            if pattern and text and not re.fullmatch(pattern, text):     # as the loader matches it, in its words
                raise FieldError(f"{text!r} is not written as {meta.get('doc') or pattern}")
            holder = binding.holder()
            if needs_prefix(holder, binding.attr):
                network = self._index().networks.get(getattr(holder, "network", "") or "")
                problem = address_problem(text, network.cidr if network is not None else "")
                if problem:
                    raise FieldError(problem)
            return text
        if kind == "list":
            items = list(raw)
            choices = meta.get("choices")
            ref = meta.get("ref")
            allowed = list(choices) if choices else (self._candidates(ref, binding.holder) if ref else None)
            for item in items:
                if allowed is not None and item not in allowed:
                    raise FieldError(f"{item!r} is not one of the allowed values")
                if isinstance(item, str) and NOT_XML.search(item):
                    raise FieldError(problem_text(item)[0])
            if len(set(map(str, items))) != len(items):
                raise FieldError("an item is listed twice")
            return items
        return raw
