"""Switch ports on the canvas: a switch that describes its ports draws them as a compact strip
along its top edge; the strip expands to full-size, named markers while the switch is selected
(a few at a time: Select All on a big bed expands nothing) or while a cable is dragged over it,
so the port a cable ends on can be picked by eye.  Expanding only resizes the one item and
reroutes its cables.
"""
from __future__ import annotations

from topology.model import Switch
from widgets.canvas.items import DeviceItem

EXPAND_SELECTED_MAX = 4      # more selected switches than this stay compact
EXPANDED_Z = 5.0             # an expanded strip may reach over a neighbour: draw it on top


class PortStrips:
    """Canvas part: which switches show their port strip expanded (`_strips_selected`: for the
    selection; `_strip_hovered`: under a dragged cable)."""

    def set_expanded(self, ident: str, on: bool) -> bool:
        """Show one switch's strip expanded or compact; False when it has no strip to change."""
        item = self.devices.get(ident)
        obj = self.objects.get(ident)
        if item is None or not isinstance(obj, Switch) or not obj.ports or item.expanded == on:
            return False
        item.expanded = on
        item.setZValue(EXPANDED_Z if on else 0.0)
        self._refresh_device(item, obj)
        self.device_moved(ident)             # its size changed: its cables reroute
        self._flush_links()
        return True

    def _sync_expanded(self) -> None:
        """The selected switches expand (a few of them), the rest fold back."""
        chosen = [i.ident for i in self.scene().selectedItems()
                  if isinstance(i, DeviceItem) and isinstance(self.objects.get(i.ident), Switch)]
        wanted = set(chosen) if len(chosen) <= EXPAND_SELECTED_MAX else set()
        for ident in self._strips_selected - wanted:
            if ident != self._strip_hovered:
                self.set_expanded(ident, False)
        for ident in wanted - self._strips_selected:
            self.set_expanded(ident, True)
        self._strips_selected = wanted

    def _hover_strip(self, device: DeviceItem | None) -> None:
        """A cable is dragged over `device` (None: over nothing): expand that switch only."""
        ident = device.ident if device is not None and isinstance(self.objects.get(device.ident), Switch) else None
        hovered = self._strip_hovered
        if ident == hovered:
            return
        if hovered is not None and hovered not in self._strips_selected:
            self.set_expanded(hovered, False)
        if ident is not None:
            self.set_expanded(ident, True)
        self._strip_hovered = ident
