"""Predicted vs measured, per volume, group, pool and VM.

Published figures (reference/002, seed 002's ESRP report, section 6 and Table 32): Pool 0 holds
the databases on 48 x RAID-5 (8D+1P) = 432 disks and measured 13,242 transfers/s (8,387 reads,
4,853 writes); Pool 1 holds the logs on 5 x RAID-5 (8D+1P) = 45 disks and measured 3,866 log
writes/s, sequential.  Neither pool was saturated (read latency 14.8 ms, log writes 3.3 ms).
Measured disks: sysstat's own iostat -x JSON test file (tests/data/captures/iostat), read by
the real parser; figures below checked by hand against it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.metrics import sample as M
from app.metrics.storage_series import StorageMap, predicted_vs_measured, with_storage_series
from app.metrics.streams import IostatJsonParser
from topology import prediction as P
from topology.fileformat import dumps, load, loads
from topology.validation import validate
from topology.validation.context import Context

ROOT = Path(__file__).resolve().parent.parent
SEED_002 = ROOT / "resources" / "examples" / "ams2500-exchange-esrp.yaml"
STUDY = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"
IOSTAT = ROOT / "tests" / "data" / "captures" / "iostat" / "sysstat_expected.iostat-x-p-ALL-JSON.json"


def test_the_model_is_consistent_with_seed_002s_measured_pools():
    bed = load(SEED_002)
    scope = Context(bed).idx.scopes["AMS2500"]
    db = P.predict(scope, "pool", "Pool 0", P.mix_of(8387 / 13242))
    assert db.disks == 432 and db.levels == "48 x RAID 5 (8D+1P)"
    assert db.iops >= 13242                    # a pool cannot deliver more than it can do
    assert db.iops == pytest.approx(432 * 180 / (8387 / 13242 + (1 - 8387 / 13242) * 4))
    random_log = P.predict(scope, "pool", "Pool 1", P.mix_of(0.0))
    sequential_log = P.predict(scope, "pool", "Pool 1", P.mix_of(0.0, 1.0))
    # random writes alone (the old model) predict 2,025 for a pool that measured 3,866: 1.9 x too low
    assert random_log.iops == pytest.approx(2025) and 3866 / random_log.iops == pytest.approx(1.91, abs=0.01)
    # full-stripe sequential writes (9 disk writes per 8 host writes), a disk streaming 4 x its random IOPS
    assert sequential_log.iops == pytest.approx(45 * 180 * 4 / (9 / 8)) and sequential_log.iops >= 3866
    assert any("sequential" in a for a in sequential_log.assumptions)
    assert any("cache not modelled" in a for a in sequential_log.assumptions)


def test_a_workloads_demand_goes_to_its_databases_and_its_logs_only_carry_the_stated_log_rate():
    bed = load(STUDY)
    need = P.demands(Context(bed))
    # each DVD Store workload loads its VM's database volume (the OS and log disks are not its IOPS)
    assert need[("PS6110", "group", "DATA")].iops == 3000
    logs = need[("PS6110", "group", "LOGS")]
    assert logs.iops == 0 and "log write rate is not stated" in logs.notes[0]
    bed.workloads[0].parameters["log_iops"] = 250         # DVD Store on SQL1 states its log writes
    logs = P.demands(Context(bed))[("PS6110", "group", "LOGS")]
    assert logs.iops == 250 and logs.mix.sequential_write == 1.0 and len(logs.notes) == 1     # SQL2's still unsaid


def test_raid_009_says_when_the_mix_it_judged_was_assumed():
    text = STUDY.read_text().replace("    demand_iops: 1500\n    read_pct: 80\n", "    demand_iops: 9000\n")
    found = [f for f in validate(loads(text), codes=["RAID-009"]) if "DATA" in f.message]
    assert found, "16 x 15K RAID 10 cannot give 9,000 + 1,500 IOPS"
    assert "an assumed mix: the workload states none" in found[0].message


def _iostat_samples(host: str) -> list:
    parser = IostatJsonParser(host, clock=iter([1000.0, 1001.0]).__next__)
    out = []
    for line in IOSTAT.read_text().splitlines():
        out += parser.feed(line)
    return out


def _mapped_study():
    text = STUDY.read_text()
    for name, device in (("SQL1-DB", "sda"), ("SQL2-DB", "sdq"), ("LOGS", "sdr")):
        text = text.replace(f"{{name: {name}, size_gb", f"{{name: {name}, drive: {device}, size_gb")
    return loads(text)


def test_device_series_become_volume_and_group_series():
    bed = _mapped_study()
    samples, storage = with_storage_series(_iostat_samples("R720"), bed)

    def value(source: str, metric: str, t: float) -> float:
        return next(s.value for s in samples if s.source == source and s.metric == metric and s.timestamp == t)
    # interval 1: sda r/s 6.90 w/s 1.69; sdq 6.87 / 0; sdr 2.28 / 0.49
    assert value("volume/PS6110:SQL1-DB", M.IOPS, 1000.0) == pytest.approx(8.59)
    assert value("volume/PS6110:LOGS", M.WRITE_LATENCY_MS, 1000.0) == pytest.approx(39.57)
    assert value("group/PS6110:group:DATA", M.IOPS, 1000.0) == pytest.approx(15.46)
    # read latency weighted by reads: (12.58 x 6.90 + 12.59 x 6.87) / 13.77
    assert value("group/PS6110:group:DATA", M.READ_LATENCY_MS, 1000.0) == pytest.approx(12.585, abs=1e-3)
    # interval 2: sda idle, so the group's read latency is sdq's own 9.50
    assert value("group/PS6110:group:DATA", M.READ_LATENCY_MS, 1001.0) == pytest.approx(9.5)
    assert "R720/sdb" in storage.unmapped and "R720/sda" not in storage.unmapped
    (data,) = [r for r in predicted_vs_measured(samples, storage) if r.ref == "PS6110:group:DATA"]
    assert data.measured_iops == pytest.approx((15.46 + 6.42) / 2)
    assert data.read_fraction == pytest.approx(20.19 / 21.88, abs=1e-4)
    assert data.predicted_iops == pytest.approx(16 * 180 / (20.19 / 21.88 + 2 * 1.69 / 21.88), rel=1e-4)
    assert data.ratio == pytest.approx(data.measured_iops / data.predicted_iops) and data.demand_iops == 3000
    assert data.mix_text == "92% reads measured (random assumed)"


def test_windows_counter_instances_map_by_drive_letter_and_a_vms_own_series_is_its_vm_series():
    bed = loads(STUDY.read_text().replace("{name: LOGS, size_gb", "{name: LOGS, drive: 'L:', size_gb"))
    storage = StorageMap(bed)
    assert storage.volume("r720/2 L:") == "PS6110:LOGS"          # typeperf: \\R720\PhysicalDisk(2 L:)
    assert storage.volume("R720/0 C:") is None
    derived = storage.derive([M_sample("SQL1", M.IOPS, 120.0)])
    assert [(s.source, s.value) for s in derived] == [("vm/SQL1", 120.0)]


def M_sample(source: str, metric: str, value: float):
    from app.metrics.sample import Sample
    return Sample(1.0, source, metric, value, "IO/s")


def test_the_appendix_prints_per_volume_group_and_the_predicted_beside_the_measured(tmp_path):
    from app.metrics.results import MetricsRecorder
    from app.run import journal as J
    bed_path = tmp_path / "study.yaml"
    bed_path.write_text(dumps(_mapped_study()))
    info = J.new_run(str(bed_path), "", root=tmp_path / "runs", configuration="hyperv")
    rec = MetricsRecorder(info.dir)
    rec.append(_iostat_samples("R720"))
    rec.close()
    pdf = tmp_path / "a.pdf"
    r = subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(bed_path), "-o", str(pdf), "--run", info.id,
                        "--runs-dir", str(tmp_path / "runs")], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    text = text.replace("\ufb01", "fi")
    assert f"Measured per volume: run {info.id}" in text and f"Measured per disk group: run {info.id}" in text
    section = text[text.index("Predicted and measured IOPS per group and pool"):]
    row = next(line for line in section.splitlines() if "DATA (group" in line)
    assert "16" in row.split() and "10.9" in row and "2,674" in row and "0.0041" in row   # 10.94 of 2,674
    assert "sequential" not in row and "cache not modelled" in section.replace("\n", " ")
    assert "Figure G." in text and "IOPS per volume" in text
    assert f"Disks not mapped to a volume: run {info.id}" in text and "R720/sdb" in text


def test_a_group_holding_only_log_volumes_is_judged_sequential():
    bed = _mapped_study()
    samples, storage = with_storage_series(_iostat_samples("R720"), bed)
    (logs,) = [r for r in predicted_vs_measured(samples, storage) if r.ref == "PS6110:group:LOGS"]
    assert "sequential: it holds only log volumes" in logs.mix_text
    assert any("sequential I/O" in a for a in logs.assumptions)


def test_the_dashboard_plots_per_volume_group_and_vm_on_request(qtbot):
    from widgets.dashboard import MetricsDashboard
    dash = MetricsDashboard()
    qtbot.addWidget(dash)
    dash.set_storage_map(StorageMap(_mapped_study()))
    dash.ingest(_iostat_samples("R720"))
    dash.show()
    dash.redraw()
    assert dash.host_sources() == []            # iostat measures devices; the host line is the load tool's
    dash.kind_combo.setCurrentIndex(dash.kind_combo.findData("volume"))
    assert dash.kind == "volume"
    assert dash.host_sources() == ["volume/PS6110:LOGS", "volume/PS6110:SQL1-DB", "volume/PS6110:SQL2-DB"]
    listed = [action.text() for action in dash.series_menu.actions()]
    assert "volume/PS6110:SQL1-DB" in listed and "R720" not in listed
    dash.kind_combo.setCurrentIndex(dash.kind_combo.findData("group"))
    assert dash.host_sources() == ["group/PS6110:group:DATA", "group/PS6110:group:LOGS"]
    t, v = dash.store.series("group/PS6110:group:DATA", M.IOPS)
    assert list(v) == pytest.approx([15.46, 6.42])
    dash.shutdown()
