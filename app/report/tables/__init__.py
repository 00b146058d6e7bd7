"""The tables a published test report prints in its appendices, as plain data.

Every appendix has its module: configuration (A: servers, VMs, clusters), network (B:
switches, networks, cabling, addresses), storage (D), storage_layout (E: drive slots by
disk group), procedure (F: workloads, scenarios, run plan) and results (G).  `model`
holds the Table, Row and Cell they return; `values` the way a value reads in a cell.
The renderers in `app/report/` turn the tables into HTML, Markdown and PDF; the
methodology view links cells to components through `Cell.ref`.

No Qt here: the tables are data, so they can be tested and reused without a display.
A value the bed does not give, where the report would print one, is a `Cell` with
`missing=True`; renderers mark it visibly instead of leaving a silent gap.
"""
