"""The look of the test-bed diagram, in QPainter terms only (QtGui, no widgets).

The canvas items, the PNG/SVG export and the printed appendix all paint through this
package, so a bed looks the same on screen and on paper.  Everything is drawn in scene
units (1 unit = 1 pixel at 100 %); fonts are sized in pixels for the same reason (a point
size would grow with a printer's resolution).

`style`: colours per traffic role, device tints, fonts, pens.  `geometry`: where port
markers, VM chips and link lines go (links route around devices in the way).  `devices`:
each kind of device, a network or VM chip, a findings badge.  `findings`: which drawn
device a finding belongs to.  `scene`: the whole bed with its legend in one rectangle.
The names below are the package's interface for the canvas, the palette and the report.
"""
from app.diagram.devices import Badge, paint_chip, paint_device
from app.diagram.findings import badges, device_of_subject
from app.diagram.geometry import (
                                  PortMark,
                                  content_rect,
                                  device_ports,
                                  link_geometry,
                                  port_marks,
                                  uncabled_paths,
                                  vm_chip_rects,
)
from app.diagram.scene import legend_size, paint_legend, render_bed
from app.diagram.style import (
                                  MARGIN,
                                  ROLE_LABELS,
                                  ROUTED_MAX,
                                  SELECT,
                                  SUBTLE,
                                  TEXT,
                                  body_style,
                                  colour,
                                  font,
                                  link_pen,
                                  port_role,
)

__all__ = ["Badge", "MARGIN", "PortMark", "ROLE_LABELS", "ROUTED_MAX", "SELECT", "SUBTLE", "TEXT", "badges",
           "body_style", "colour", "content_rect", "device_of_subject", "device_ports", "font", "legend_size",
           "link_geometry", "link_pen", "paint_chip", "paint_device", "paint_legend", "port_marks", "port_role",
           "render_bed", "uncabled_paths", "vm_chip_rects"]
