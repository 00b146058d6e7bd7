"""The printed appendices of a bed: configuration tables, storage layout, diagram,
methodology and results.

`assembly.build_appendix` puts the content together as a list of blocks (`blocks`):
headings, tables (`tables/`, one module per appendix), methodology steps (`steps`), the
diagram (`diagram_image`) and charts.  The same blocks render three ways: `html` and
`markdown` hold the pieces, `export` the whole documents and the files; `pdf` paints
them on a QPdfWriter or QPrinter through its own pagination (`flows`: each block laid
out with the places it may be cut; `pagination`: pages, repeated table headers, running
heads).  `style` holds fonts and style sheets, `qt_app` the QGuiApplication it paints
with.  QtGui only, no widgets: it runs offscreen, in the CLI as in the GUI's print preview.
"""
