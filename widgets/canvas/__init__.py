"""The diagram: the bed's devices and cables on a QGraphicsScene, edited with the mouse.

What a person does here and what it becomes:
* pick a kind in the palette, click (or drop) on the canvas: `operations.add_device`;
* drag from a port marker to another port or a switch: `operations.connect` (refused
  links say why in the status bar and draw nothing);
* drag devices (all selected ones move together, snapped to the grid): one `move` step;
* rubber band, Ctrl+A, copy/cut/paste (project-file text on the clipboard), Delete;
* zoom (Ctrl+wheel, actions), pan (middle button or Space+drag), fit, automatic layout.

The canvas never keeps its own copy of the model: items hold ids, paint from the
document's bed, and every change goes through `document.apply(edit)`.  On
`document.changed(ids)` only the touched devices and their links are redrawn; on
`document.reset` the scene is rebuilt.  Devices without a position in the model are
placed by the automatic layout (computed on reset, not written to the model: opening a
file does not make it "modified"; the Automatic Layout action writes it, as one step).

The parts: `view` (the Canvas widget: zoom, pan, keys, mouse dispatch), `drawing` (scene from
the model), `links` (cables follow devices), `cabling` (drag port to port), `placing` (palette
clicks and drops), `editing` (clipboard, delete, move), `selection_sync`, `tooltips`,
`export` (PNG, SVG, print), `legend`, `port_strips` (a switch's ports, compact or expanded),
`path_overlay` (storage paths highlighted for the path view), and `items` (the scene items).
"""
