"""`python -m bench.load_stages` times the loader's own steps, and stops when they no longer build
the bed `fileformat.loads` builds (a breakdown of something else would mislead)."""
from __future__ import annotations

import dataclasses

import pytest

from bench import load_stages
from topology import fileformat
from topology.fileformat import dumps
from topology.synthetic import generate


def _text() -> str:
    return dumps(generate(hosts=6, vms=30, arrays=2, disks=40, pins=False, scenarios=True))


def test_each_step_of_the_fast_load_is_timed_and_builds_the_loaders_bed():
    best, whole = load_stages.measure(_text(), repeat=1)
    assert list(best) == ["pre-scan", "rapidyaml parse + JSON out", "depth bound",
                          "JSON decode (duplicate-key hook)", "quoted-text checks", "model build",
                          "load checks", "references"]
    assert all(seconds >= 0 for seconds in best.values()) and whole > 0


def test_the_breakdown_stops_when_the_loader_builds_another_bed(monkeypatch):
    real = fileformat.loads
    monkeypatch.setattr(fileformat, "loads",
                        lambda text: dataclasses.replace(real(text), servers=real(text).servers[1:]))
    with pytest.raises(SystemExit, match="no longer follows the loader"):
        load_stages.measure(_text(), repeat=1)


def test_a_file_off_the_fast_path_is_refused_rather_than_timed_as_if_on_it():
    text = _text().replace("format_version: 1", "format_version: &v 1", 1)
    with pytest.raises(SystemExit, match="does not take the fast path"):
        load_stages.measure(text, repeat=1)
