"""Switch ports on the canvas and in the property editor (issue 12 item 5), driven as a person
would in the real main window: a switch shows its ports as a compact strip that expands when
selected or when a cable is dragged over it; a cable dropped on the switch takes the next free
port that fits and the notice over the drawing says which; a port under the mouse is taken as
it is; a click on a port opens its form; 24 ports are added in one undoable step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from test_designer_e2e import WindowHands, open_window

from topology import operations


@pytest.fixture
def window(qtbot):
    w = open_window(qtbot)
    w.files.new()
    return w


@pytest.fixture
def hands(qtbot, window) -> WindowHands:
    h = WindowHands(qtbot, window)
    h.place("server:hypervisor", QPointF(160, 80))
    h.place("switch:ethernet", QPointF(160, 330))
    assert h.canvas.devices["sw-1"].expanded           # the new switch is selected: its ports show
    h.selection.clear()
    return h


def item(hands, ident):
    return hands.canvas.devices[ident]


def test_a_switch_shows_its_ports_compact_and_expands_when_selected(qtbot, hands):
    sw = item(hands, "sw-1")
    assert len(sw.marks) == 24 and not sw.expanded
    compact = (sw.w, sw.h, sw.marks["1"].size)
    assert compact[2] < 8                               # small markers: a strip, not a wall of boxes
    hands.click(hands.centre("sw-1"))
    assert hands.selection.ids == {"sw-1"}
    assert sw.expanded and sw.marks["1"].size == 11 and sw.h > compact[1] and sw.w == compact[0]
    hands.click(hands.centre("host-1"))                 # another selection: the strip folds back
    assert not sw.expanded and (sw.w, sw.h, sw.marks["1"].size) == compact


def test_select_all_on_many_switches_expands_none(qtbot, hands):
    for i in range(5):
        hands.place("switch:ethernet", QPointF(160 + 260 * (i % 3), 520 + 120 * (i // 3)))
    hands.canvas.select_all()
    assert not any(d.expanded for d in hands.canvas.devices.values())


def test_a_cable_dropped_on_the_switch_takes_the_next_free_port_and_says_which(qtbot, hands):
    w = hands.window
    w.document.bed.switches[0].ports[0].roles = ["lan"]        # port 1 carries LAN: not for iSCSI
    hands.drag(hands.port("host-1:SAN1"), hands.centre("sw-1"))
    assert [(lk.a, lk.b) for lk in w.document.bed.links] == [("host-1:SAN1", "sw-1:2")]
    notice = hands.canvas.notice
    assert notice.isVisible() and notice.kind == "info"
    assert notice.text() == "Connect host-1:SAN1 to sw-1:2: sw-1:2 is the next free port that fits"
    assert w.document.undo_stack.undoText() == "Connect host-1:SAN1 to sw-1:2"
    assert hands.canvas.cabled["sw-1"] == {"2"}          # the port is drawn cabled


def test_a_cable_dragged_over_a_switch_lands_on_the_port_under_the_mouse(qtbot, hands):
    sw = item(hands, "sw-1")
    start = hands.port("host-1:SAN2")
    hands.mouse(QEvent.Type.MouseButtonPress, start)
    hands.mouse(QEvent.Type.MouseMove, hands.centre("sw-1"), button=Qt.MouseButton.NoButton)
    assert sw.expanded, "the switch under a dragged cable shows its ports at full size"
    target = sw.mapToScene(sw.marks["7"].rect.center())
    hands.mouse(QEvent.Type.MouseMove, target, button=Qt.MouseButton.NoButton)
    hands.mouse(QEvent.Type.MouseButtonRelease, target, buttons=Qt.MouseButton.NoButton)
    assert [(lk.a, lk.b) for lk in hands.document.bed.links] == [("host-1:SAN2", "sw-1:7")]
    assert not sw.expanded                              # folded back once the cable is made
    link = next(iter(hands.canvas.links.values()))
    end = link.polyline.at(link.polyline.count() - 1)
    assert (end - sw.mapToScene(sw.marks["7"].anchor)).manhattanLength() < 0.5, "the cable ends on port 7"


def test_a_port_that_does_not_fit_is_refused_over_the_drawing(qtbot, hands):
    for p in hands.document.bed.switches[0].ports:
        p.roles = ["lan"]
    hands.document.bed.switches[0].port_count = 24
    hands.drag(hands.port("host-1:SAN1"), hands.centre("sw-1"))
    assert not hands.document.bed.links
    notice = hands.canvas.notice
    assert notice.isVisible() and notice.kind == "refusal"
    assert "sw-1 has no free port that fits host-1:SAN1 (iSCSI)" in notice.text()
    assert "24 carry other traffic" in notice.text()


def test_clicking_a_port_opens_its_form_and_each_edit_is_one_step(qtbot, hands):
    w = hands.window
    sw = item(hands, "sw-1")
    hands.click(sw.mapToScene(sw.marks["3"].rect.center()))
    assert w.selection.ids == {"sw-1:3"}
    editor = w.properties
    assert editor.title.text() == "Port sw-1:3" and "not cabled" in editor.subtitle.text()
    for field in ("speed_gbps", "mtu", "vlan", "flow_control", "edge", "team"):
        editor.editor(field)                            # every one of them is on the form
    with pytest.raises(KeyError):
        editor.editor("bound_to")                       # a host port's binding is not a switch's
    steps = w.document.undo_stack.count()
    speed = editor.editor("speed_gbps")
    speed.setFocus()
    speed.lineEdit().selectAll()
    qtbot.keyClicks(speed.lineEdit(), "10")
    qtbot.keyClick(speed.lineEdit(), Qt.Key.Key_Return)
    port = w.document.bed.switches[0].ports[2]
    assert port.speed_gbps == 10 and w.document.undo_stack.count() == steps + 1
    w.document.undo_stack.undo()
    assert port.speed_gbps is None


def test_adding_24_ports_in_the_switch_form_is_one_undoable_step(qtbot, hands):
    from widgets.forms.switch_ports_box import SwitchPortsBox
    w = hands.window
    w.selection.set({"sw-1"})
    box = w.properties.findChild(SwitchPortsBox, "switchPorts")
    assert box.summary.text() == "24 ports: 0 cabled, 24 free · speed not stated"
    assert "none" not in box.summary.text()
    box.count.setValue(24)
    box.speed.setValue(10)
    box.role.setCurrentIndex(box.role.findData("iscsi"))
    steps = w.document.undo_stack.count()
    qtbot.mouseClick(box.add, Qt.MouseButton.LeftButton)
    sw = w.document.bed.switches[0]
    assert len(sw.ports) == 48 and sw.port_count == 48 and w.document.undo_stack.count() == steps + 1
    assert w.document.undo_stack.undoText() == "Add 24 ports to sw-1"
    assert len(item(hands, "sw-1").marks) == 48                # the canvas drew them
    box = w.properties.findChild(SwitchPortsBox, "switchPorts")
    assert box.summary.text() == "48 ports: 0 cabled, 48 free · 24 × speed not stated, 24 × 10 Gb/s"
    w.document.undo_stack.undo()
    assert len(sw.ports) == 24 and len(item(hands, "sw-1").marks) == 24


def test_a_switch_that_states_only_a_port_count_says_so_and_can_describe_them(qtbot, window):
    from widgets.forms.switch_ports_box import SwitchPortsBox
    w = window
    w.document.apply(operations.add_device(w.document.bed, "switch:ethernet", x=0, y=0))
    sw = w.document.bed.switches[0]
    sw.ports, sw.port_count = [], 52
    w.document.changed.emit({"sw-1"})
    w.selection.set({"sw-1"})
    box = w.properties.findChild(SwitchPortsBox, "switchPorts")
    assert box.summary.text() == "52 ports, none described one by one"
    assert box.add.text() == "Describe" and box.count.value() == 52
    qtbot.mouseClick(box.add, Qt.MouseButton.LeftButton)
    assert len(sw.ports) == 52 and sw.port_count == 52
    assert len(w.canvas.devices["sw-1"].marks) == 52
