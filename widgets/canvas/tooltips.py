"""Tooltips on the canvas: a device, port, VM, chip or cable under the mouse, with its findings.
A device's tooltip gives its labels in full (the drawing elides a long one with "…")."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QPointF
from PySide6.QtWidgets import QToolTip

from app import diagram
from topology import switch_ports
from topology.device_face import array_line, group_card_lines, server_lines, switch_line
from topology.layout import group_member_ids
from topology.model import ArrayGroup, Network, Server, StorageArray, Switch
from widgets.canvas.items import ChipItem


class Tooltips:
    """Canvas part: what the mouse points at, in words."""

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            text = self._tooltip(self.mapToScene(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def _tooltip(self, scene_pos: QPointF) -> str:
        item = self._device_at(scene_pos)
        if item is None:
            chip = next((i for i in self.scene().items(scene_pos) if isinstance(i, ChipItem)), None)
            if chip is not None:
                obj = self.objects.get(chip.ident)
                lines = [f"<b>{chip.ident}</b>"]
                if isinstance(obj, Network):
                    lines.append(f"{diagram.ROLE_LABELS.get(obj.role, obj.role)} network {obj.cidr}")
                elif isinstance(obj, ArrayGroup):
                    obj = self.shown(chip.ident, obj)
                    head, rows = group_card_lines(obj, group_member_ids(self.bed, chip.ident))
                    lines += [escape(head), f"{len(obj.volumes)} volume(s), {len(obj.pools)} pool(s)"]
                    lines += [escape(r) for r in rows]
                else:
                    lines.append("VM with no host: drop it on a host in the VM placement view")
                return self._with_findings(chip.ident, lines)
            link = self._link_at(scene_pos)
            if link is not None:
                lk = link.model_obj
                return f"{lk.a} — {lk.b}<br>{diagram.ROLE_LABELS.get(link.role, link.role)} ({lk.kind})"
            return ""
        obj = self.objects.get(item.ident)
        local = item.mapFromScene(scene_pos)
        port = item.port_at(local)
        if port is not None:
            m = item.marks[port]
            p = m.port
            bits = [f"<b>{item.ident}:{port}</b>", f"{p.kind}, {', '.join(p.roles) or 'no role'}"]
            if p.address:
                bits.append(p.address)
            if p.mtu:
                bits.append(f"MTU {p.mtu}")
            other = [lk.b if lk.a == f"{item.ident}:{port}" else lk.a for lk in self.bed.links
                     if f"{item.ident}:{port}" in (lk.a, lk.b)]
            bits.append(f"cabled to {other[0]}" if other else "not cabled: drag from here to cable it")
            return "<br>".join(bits)
        bay = item.bay_at(local)
        if bay is not None:
            where = f"bay {bay.bay}" if bay.kind == "blade" else f"I/O module bay {bay.bay}"
            return f"<b>{escape(', '.join(bay.occupants))}</b> in {where} of {escape(item.ident)}<br>click to select it"
        vm = item.vm_at(local)
        if vm is not None:
            v = next((x for x in self.vms_of.get(item.ident, ()) if x.id == vm), None)
            if v is not None:
                return f"<b>{v.id}</b> on {item.ident}<br>{v.vcpu} vCPU, {v.memory_gb:g} GB {v.guest_os}"
        lines = [f"<b>{escape(item.ident)}</b>", *(escape(t) for t in face_lines(self.bed, obj))]
        vms = self.vms_of.get(item.ident, ())
        if vms:
            lines.append(f"{len(vms)} VMs: " + ", ".join(v.id for v in vms[:12]) + (" …" if len(vms) > 12 else ""))
        return self._with_findings(item.ident, [x for x in lines if x])

    def _with_findings(self, ident: str, lines: list[str]) -> str:
        badge = self.badges.get(ident)
        if badge is not None:
            lines += [""] + [m for m in badge.messages[:8]]
            if len(badge.messages) > 8:
                lines.append(f"… and {len(badge.messages) - 8} more (see the Validation panel)")
        return "<br>".join(lines)


def face_lines(bed, obj) -> list[str]:
    """The labels a device shows under its name, unabridged; a switch adds its ports in a line."""
    if isinstance(obj, Server):
        return [t for t in server_lines(obj) if t]
    if isinstance(obj, Switch):
        return [switch_line(obj), "Ports: " + switch_ports.describe_all(bed, obj)]
    if isinstance(obj, StorageArray):
        return [array_line(obj)]
    return [getattr(obj, "model", "")] if getattr(obj, "model", "") else []
