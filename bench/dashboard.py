"""Benchmark of the live metrics path (issue targets in brackets):

* ingest: samples per second into the ring buffers, 64 series [>= 100,000/s];
* redraw: the dashboard with 64 series holding one hour at 1 sample/s each, one new sample
  on every series per tick, the curves updated and the widget painted [< 16 ms];
* sample to screen: real fio on a host (an sshd host when this machine can start one, else
  this machine), its status stream through the run engine, the metrics tap and the
  dashboard's timer, until the point is painted [< 1.5 s];
* memory: an 8-hour run at 1 sample/s simulated on 64 series, resident memory each hour
  [no growth beyond the ring buffers];
* reopen: a recorded one-hour run at 64 series (and at the 192 series a real fio run of 16
  hosts records: per host and per job) read back from its metrics.jsonl and drawn whole [< 1 s].

    python -m bench.dashboard [--quick]
Run with QT_QPA_PLATFORM=offscreen on a machine without a screen (make bench does).
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HOSTS = 16                   # 16 hosts x 4 plotted metrics = 64 series
HOUR = 3600


def _metrics():
    from app.metrics import sample as M
    return ((M.IOPS, "IO/s", 5000.0), (M.READ_LATENCY_MS, "ms", 4.0), (M.WRITE_LATENCY_MS, "ms", 2.0),
            (M.THROUGHPUT_MBPS, "MB/s", 40.0))


def _level(h: int, base: float) -> float:
    return base * (0.6 + 0.05 * h)          # each host runs at its own level


def _values(h: int, base: float, rng, n: int | None, jitter: float):
    """A steady workload: `jitter` is the relative spread of one host's per-second values
    (fio's per-second IOPS on a steady run vary by a few per cent)."""
    return _level(h, base) * (1 + jitter * rng.standard_normal(n))


def _tick(t: float, rng, jitter: float = 0.05) -> list:
    from app.metrics.sample import Sample
    return [Sample(t, f"host{h:02d}", metric, float(_values(h, base, rng, None, jitter)), unit)
            for h in range(HOSTS) for metric, unit, base in _metrics()]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def bench_ingest(seconds: int = HOUR) -> tuple[int, float]:
    """Samples per second through SeriesStore.ingest, fed one-second batches as collectors do."""
    from app.metrics.series import SeriesStore
    rng = np.random.default_rng(1)
    batches = [_tick(1e9 + i, rng) for i in range(seconds)]
    store = SeriesStore()
    t0 = time.perf_counter()
    n = sum(store.ingest(b) for b in batches)
    return n, n / (time.perf_counter() - t0)


def _filled_dashboard(seconds: int, jitter: float = 0.05, window_s: int = HOUR):
    from widgets.dashboard import MetricsDashboard, Threshold
    dash = MetricsDashboard()
    dash.resize(1280, 800)
    dash.set_thresholds([Threshold("read", "<", 20.0, "db read < 20 ms"),
                         Threshold("write", "<", 10.0, "log write < 10 ms")])
    dash._timer.stop()              # the benchmark calls redraw itself
    dash.window_combo.setCurrentIndex(dash.window_combo.findData(window_s))    # HOUR: every point in view
    rng = np.random.default_rng(2)
    t0 = time.time() - seconds
    for (metric, unit, base) in _metrics():
        for h in range(HOSTS):
            v = _values(h, base, rng, seconds, jitter)
            dash.store.ingest_arrays(f"host{h:02d}", metric, unit, t0 + np.arange(seconds, dtype=float), v)
    return dash, t0 + seconds


def bench_redraw(app, ticks: int = 60, jitter: float = 0.05, window_s: int = HOUR):
    """Milliseconds per tick: the model update (curves' data, the all-hosts sums, threshold
    times), that plus the event loop painting the window, and the GUI thread's CPU time for both."""
    dash, t_next = _filled_dashboard(HOUR, jitter, window_s)
    dash.show()
    app.processEvents()
    dash.redraw()
    app.processEvents()
    rng = np.random.default_rng(3)
    update_ms, total_ms, cpu_ms = [], [], []
    for i in range(ticks):
        dash.ingest(_tick(t_next + i, rng, jitter))
        c0 = time.thread_time()
        t0 = time.perf_counter()
        dash.redraw()
        t1 = time.perf_counter()
        app.processEvents()         # the scene's update requests, then the paint events
        t2 = time.perf_counter()
        cpu_ms.append((time.thread_time() - c0) * 1000)
        update_ms.append((t1 - t0) * 1000)
        total_ms.append((t2 - t0) * 1000)
    from widgets.dashboard import ALL_HOSTS
    curves = len([k for k in dash._curves if k[0] != ALL_HOSTS])
    dash.shutdown()
    dash.close()
    # cpu_ms: the GUI thread's CPU time per tick, steadier than wall time on a shared machine
    return update_ms, total_ms, curves, cpu_ms


def bench_memory(app, hours: int = 8, redraw_every_s: int = 60) -> list[float]:
    """Resident MB after each simulated hour: 64 series at 1 sample/s, the dashboard redrawn
    every `redraw_every_s` simulated seconds (painting each simulated second would take
    8 hours of wall time; the buffers and curves are what could grow)."""
    from widgets.dashboard import MetricsDashboard
    dash = MetricsDashboard()
    dash._timer.stop()
    dash.resize(1280, 800)
    dash.show()
    rng = np.random.default_rng(4)
    t0 = time.time() - hours * HOUR
    values = {(f"host{h:02d}", m, u): _values(h, base, rng, HOUR, 0.05)
              for h in range(HOSTS) for m, u, base in _metrics()}
    rss = []
    for hour in range(hours):
        for start in range(0, HOUR, redraw_every_s):
            t = t0 + hour * HOUR + start + np.arange(redraw_every_s, dtype=float)
            for (src, metric, unit), v in values.items():
                dash.store.ingest_arrays(src, metric, unit, t, v[start:start + redraw_every_s])
            dash.redraw()
            app.processEvents()
        gc.collect()
        rss.append(_rss_mb())
    dash.shutdown()
    dash.close()
    return rss


def bench_reopen(app, seconds: int = HOUR, per_job: bool = False) -> tuple[int, float, float]:
    """(samples, seconds to read metrics.jsonl and draw it whole, of which reading) for a run
    of `seconds` at 64 series (per_job: each host's fio job series too, as the recorder writes)."""
    from app.metrics import sample as M
    from app.metrics.history import load_series
    from app.metrics.results import MetricsRecorder
    from widgets.dashboard import MetricsDashboard
    rng = np.random.default_rng(7)
    metrics = list(_metrics()) + ([(M.READ_IOPS, "IO/s", 3500.0), (M.WRITE_IOPS, "IO/s", 1500.0)] if per_job else [])
    with tempfile.TemporaryDirectory(prefix="tbs-bench-reopen-") as tmp:
        recorder = MetricsRecorder(Path(tmp))
        t0 = 1.8e9
        n = 0
        for i in range(seconds):
            batch = [M.Sample(t0 + i, source, metric, float(_values(h, base, rng, None, 0.05)), unit)
                     for h in range(HOSTS) for source in ([f"host{h:02d}", f"host{h:02d}/oltp"] if per_job
                                                          else [f"host{h:02d}"])
                     for metric, unit, base in metrics]
            recorder.append(batch)
            n += len(batch)
        recorder.close()
        dash = MetricsDashboard()
        dash.resize(1280, 800)
        dash.show()
        app.processEvents()
        gc.collect()
        start = time.perf_counter()
        load_series(Path(tmp))
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        dash.show_history(Path(tmp))
        dash.repaint()
        app.processEvents()
        total = time.perf_counter() - start
        dash.shutdown()
        dash.deleteLater()
    return n, total, read_s


def _fio_lab():
    """An sshd host to run fio on, or None (then fio runs on this machine)."""
    try:
        from bench.sandbox_hosts import SandboxLab
    except ImportError:
        return None
    if SandboxLab.unavailable_reason():
        return None
    return SandboxLab


def bench_sample_to_screen(app, work: Path, seconds: int = 12) -> tuple[list[float], str]:
    """Seconds from fio writing a status report on the host (its `timestamp_ms`) to the
    dashboard painting the point made from it."""
    import threading

    from app.remote.local import LocalTransport
    from app.run import journal as J
    from app.run.engine import RunEngine
    from app.run.metrics_tap import MetricsTap
    from app.run.plan import RunStep, Task
    from widgets.dashboard import MetricsDashboard

    dash = MetricsDashboard()
    dash.resize(1280, 800)
    dash.show()
    delays: list[float] = []
    seen: set[float] = set()
    original = dash.redraw

    def redraw_and_time() -> None:
        original()
        dash.repaint()
        now = time.time()
        for src in dash.host_sources():
            t, _v = dash.store.series(src, "iops")
            for ts in t[-3:]:
                if ts not in seen:
                    seen.add(ts)
                    delays.append(now - ts)

    dash._timer.timeout.disconnect()
    dash._timer.timeout.connect(redraw_and_time)

    data = work / "fio.dat"
    script = (f"fio --name=bench --filename={data} --size=32m --rw=randrw --rwmixread=70 --bs=4k --direct=0 "
              f"--ioengine=psync --time_based --runtime={seconds} --output-format=json --status-interval=1")
    lab_cls = _fio_lab()
    lab = None
    if lab_cls is not None:
        lab = lab_cls(work / "lab").__enter__()
        lab.add_host("fio1")
        from app.remote.ssh import SSHTransport
        factory, where = (lambda h: SSHTransport(**lab.connection(h))), "an sshd host on loopback, over SSH"
    else:
        factory, where = (lambda h: LocalTransport(h)), "this machine (no sshd host could be started)"
    info = J.new_run("bench.yaml", "", root=work / "runs")
    tap = MetricsTap(info.dir, on_samples=dash.ingest)
    steps = [RunStep("1.1", "fio", "run", "Run", "fio1", [Task("1.1", "fio1", "bash", script)], template="bench#load")]
    engine = RunEngine(info, steps, factory, timeout=seconds + 60, listener=tap)
    done = threading.Event()
    threading.Thread(target=lambda: (engine.run_steps(steps), done.set()), daemon=True).start()
    deadline = time.monotonic() + seconds + 60
    while not done.is_set() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    for _ in range(50):            # the last points reach the screen on the next timer ticks
        app.processEvents()
        time.sleep(0.01)
    engine.close()
    tap.close()
    if lab is not None:
        lab.__exit__(None, None, None)
    dash.shutdown()
    dash.close()
    return delays, where


def _ok(flag: bool) -> str:
    return "OK" if flag else "MISSED"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.dashboard")
    ap.add_argument("--quick", action="store_true", help="fewer ticks, 2 simulated hours, a 6 s fio run")
    ns = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from widgets.canvas.view import application  # app/ itself imports no QtWidgets
    app = application()

    n, rate = bench_ingest(600 if ns.quick else HOUR)
    print(f"ingest       {n:,} samples in one-second batches of {HOSTS * 4}: {rate:,.0f} samples/s "
          f"(target >= 100,000: {rate / 100_000:.1f} x) {_ok(rate >= 100_000)}")

    print(f"redraw       64 series x {HOUR} points held, 1280 x 800 window, one new sample on every series per tick:")
    for jitter, window, what in ((0.05, HOUR, "the whole hour in view, steady load (5 % jitter)"),
                                 (0.25, HOUR, "the whole hour in view, noisy load (25 % jitter)"),
                                 (0.05, 300, "a 5-minute view, steady load")):
        update, total, _curves, cpu = bench_redraw(app, 20 if ns.quick else 60, jitter, window)
        med, p95 = statistics.median(total), float(np.percentile(total, 95))
        print(f"  {what}: curves updated median {statistics.median(update):.1f} ms; updated and painted "
              f"median {med:.1f} ms, p95 {p95:.1f} ms (target < 16 ms: update {_ok(statistics.median(update) < 16)}, "
              f"with paint {_ok(med < 16)}, p95 < 33 ms {_ok(p95 < 33)}); CPU time of the GUI thread per tick "
              f"median {statistics.median(cpu):.1f} ms, p95 {np.percentile(cpu, 95):.1f} ms")

    if shutil.which("fio"):
        with tempfile.TemporaryDirectory(prefix="tbs-bench-dash-") as tmp:
            delays, where = bench_sample_to_screen(app, Path(tmp), 6 if ns.quick else 12)
        if delays:
            print(f"to screen    fio on {where}: {len(delays)} points, from fio's report to painted "
                  f"median {statistics.median(delays):.2f} s, max {max(delays):.2f} s "
                  f"(target < 1.5 s; HCIBench refreshes every 30 s, VMFleet every 2 s) {_ok(max(delays) < 1.5)}")
        else:
            print("to screen    no point reached the dashboard: see the run's output")
    else:
        print("to screen    skipped: fio is not installed")

    for per_job in (False, True):
        n, total, read_s = bench_reopen(app, 600 if ns.quick else HOUR, per_job)
        print(f"reopen       a recorded {'10-minute' if ns.quick else 'one-hour'} run, {n:,} samples "
              f"({'192 series: hosts and their fio jobs' if per_job else '64 series'}) read from metrics.jsonl and "
              f"drawn whole: {total:.2f} s, of which reading {read_s:.2f} s (target < 1 s) {_ok(total < 1)}")

    hours = 2 if ns.quick else 8
    rss = bench_memory(app, hours)
    ring_mb = HOSTS * 4 * HOUR * 2 * 8 / 1e6
    growth = rss[-1] - rss[0]
    print(f"memory       {hours} h at 1 sample/s on 64 series, resident MB per hour: "
          + " ".join(f"{r:.0f}" for r in rss)
          + f"; growth after hour 1: {growth:+.1f} MB (ring buffers hold {ring_mb:.1f} MB) {_ok(growth < 5)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
