"""The model catalogue (resources/models/catalogue.yaml): documented limits by model, each with its
source, used by the LIM rules where the bed gives no limit of its own; a bed value wins."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from resources import example_path
from topology.fileformat import load
from topology.model import Controller, Port
from topology.model_catalogue import CATALOGUE_FILE, LIMITS, CatalogueError, _read, entries, find, limit
from topology.unknown import NOT_STATED
from topology.validation import validate

BLADE = "bladecenter-fc-hyperv-2008r2"


def test_every_stated_limit_has_a_source_and_every_entry_says_where_it_looked():
    found = entries()
    assert len(found) >= 20
    for e in found:
        assert e.sources or e.searched, e.name
        for name, value in e.limits.items():
            if value is not NOT_STATED:
                source = e.source_of(name)
                assert source is not None and source.url and source.says, (e.name, name)


def test_the_models_the_issue_and_the_examples_name_are_in_the_catalogue():
    named = {"arrays": ["IBM System Storage DS5020 (1814-20A)", "IBM DS3950", "Dell EqualLogic PS5000XV",
                        "Dell EqualLogic PS6110XV 3.5\"", "Dell PowerVault MD3000i", "Dell EqualLogic PS6100X",
                        "Dell PowerVault MD3820i", "Hitachi Adaptable Modular Storage 2500 (AMS 2500)"],
             "switches": ["Dell PowerConnect 6248", "Dell PowerConnect 8024F", "Dell Force10 S4810",
                          "Dell PowerConnect 5448", "Dell PowerConnect 5548", "Brocade 5320"],
             "chassis": ["IBM BladeCenter H (8852)"],
             "servers": ["Dell PowerEdge R710", "Dell PowerEdge R720", "IBM BladeCenter HS22 (7870)", "Sun Fire 4270"]}
    for kind, models in named.items():
        for model in models:
            assert find(kind, model) is not None, model
    # every array, switch and chassis model the shipped examples draw
    from resources import example_names
    for name in example_names():
        bed = load(example_path(name))
        for kind, items in (("arrays", bed.arrays), ("switches", bed.switches), ("chassis", bed.chassis)):
            for item in items:
                if item.model:
                    assert find(kind, item.model) is not None, (name, item.model)
    assert limit("arrays", "IBM System Storage DS5020", "max_drives")[0] == 112
    assert limit("arrays", "IBM DS3950", "host_ports_per_controller")[0] == 4
    assert limit("chassis", "IBM BladeCenter H", "bays")[0] == 14
    assert limit("switches", "PowerConnect 8024F", "ports")[0] == 24
    assert limit("arrays", "Dell EqualLogic PS5000XV", "max_drives") is None      # no source found: not stated


def test_a_limit_with_no_source_or_an_unknown_field_is_refused(tmp_path: Path):
    data = yaml.safe_load(CATALOGUE_FILE.read_text())
    broken = copy.deepcopy(data)
    broken["arrays"][0]["sources"] = []
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(CatalogueError, match="DS5020: controllers = 2 has no source that gives it"):
        _read(str(path))
    odd = copy.deepcopy(data)
    odd["switches"][0]["bays"] = 3
    path.write_text(yaml.safe_dump(odd))
    with pytest.raises(CatalogueError, match="unknown fields"):
        _read(str(path))
    assert set(LIMITS) == set(data)


def _blade():
    return load(example_path(BLADE))


def test_lim_rules_read_the_catalogue_where_the_bed_gives_no_limit_and_the_bed_wins():
    bed = _blade()
    ds = next(a for a in bed.arrays if "DS5020" in a.model)
    assert ds.max_disks is None
    enclosure = ds.enclosures[0]
    enclosure.slots = 200
    enclosure.disks[0].slots = "0-119"          # 120 drives in a 112-drive model
    found = [f for f in validate(bed) if f.code == "LIM-001"]
    assert len(found) == 1 and "a IBM System Storage DS5020 takes at most 112" in found[0].message
    assert "DS3500 Technical Overview" in found[0].message
    ds.max_disks = 200                          # the bed says otherwise: it wins
    assert not [f for f in validate(bed) if f.code == "LIM-001"]


def test_a_blade_in_a_bay_the_documented_chassis_does_not_have():
    bed = _blade()
    chassis = bed.chassis[0]
    chassis.bays = None
    blade = next(s for s in bed.servers if s.chassis == chassis.id)
    blade.bay = 15
    (found,) = [f for f in validate(bed) if f.code == "LIM-002"]
    assert "a IBM BladeCenter H has bays 1-14" in found.message


def test_a_controller_drawn_with_more_host_ports_than_its_model_takes():
    bed = _blade()
    ds = next(a for a in bed.arrays if "DS5020" in a.model)
    ctrl: Controller = ds.controllers[0]
    host = [p for p in ctrl.ports if p.kind != "management"]
    ctrl.ports += [Port(name=f"extra{i}", kind="fc") for i in range(5 - len(host))]
    found = [f for f in validate(bed) if f.code == "LIM-003"]
    assert found and "has 5 host ports; a IBM System Storage DS5020 controller takes at most 4" in found[0].message
