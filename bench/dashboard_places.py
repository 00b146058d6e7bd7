"""The dashboard's place chooser: cutting a big run's series to one place in the test -- 16 hosts,
4 metrics, an hour at one sample a second, 200 steps per host -- as it is done when a place is
chosen and, at most once a second, while a live run goes on (widgets/dashboard_places.py; target:
well under a redraw's budget, 250 ms).  `python -m bench.dashboard_places [--repeat N]`."""
from __future__ import annotations

import argparse
import os
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dashboard_places")
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import numpy as np
    from PySide6.QtWidgets import QApplication, QWidget

    from app.metrics.place_series import RunPlaces
    from app.metrics.series import SeriesStore
    from widgets.dashboard_places import PlaceChooser
    t0 = 1_800_000_000.0
    hosts = [f"h{i}" for i in range(16)]
    keys = [("", "cells", "", "4 active cells", str(r)) for r in range(1, 201)]
    windows = {h: [(t0 + 18 * k, t0 + 18 * k + 15, keys[k]) for k in range(200)] for h in hosts}
    store = SeriesStore()
    rng = np.random.default_rng(1)
    for h in hosts:
        for metric in ("iops", "read_latency_ms", "write_latency_ms", "throughput_mbps"):
            store.ingest_arrays(h, metric, "", t0 + np.arange(3600.0), rng.random(3600))
    app = QApplication.instance() or QApplication([])
    holder = QWidget()
    chooser = PlaceChooser(holder, lambda: None)
    chooser.places, chooser._keys, chooser.key = RunPlaces(keys, windows), keys, keys[100]
    times = []
    for _ in range(ns.repeat):
        chooser._built = ()
        start = time.perf_counter()
        shown, _remade = chooser.store_for(store)
        times.append(time.perf_counter() - start)
    samples = sum(int(np.isfinite(shown.series(s, m)[1]).sum()) for s, m in shown.keys())
    print(f"one place of 64 series x 3600 s, 200 steps per host: best {min(times) * 1000:.1f} ms, "
          f"worst {max(times) * 1000:.1f} ms over {ns.repeat} ({samples} samples at the place)")
    chooser.shutdown()
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
