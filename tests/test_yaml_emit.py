"""The fast project-file writer: the same text libyaml writes, read back as the same data."""
from __future__ import annotations

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resources import example_names, example_path
from topology import project_save, yaml_bounded, yaml_emit
from topology.fileformat import load
from topology.model import FORMAT_VERSION
from topology.synthetic import generate


def _plain(bed) -> dict:
    data = project_save.to_data(bed)
    return {"format_version": FORMAT_VERSION, **{k: v for k, v in data.items() if k != "format_version"}}


@pytest.mark.parametrize("name", example_names())
def test_examples_are_written_exactly_as_libyaml_writes_them(name):
    data = _plain(load(example_path(name)))
    assert yaml_emit.dumps(data) == yaml_emit.libyaml_dumps(data)


def test_a_synthetic_bed_is_written_exactly_as_libyaml_writes_it():
    data = _plain(generate(hosts=40, vms=200, arrays=3, disks=200, pins=True, scenarios=True))
    assert yaml_emit.dumps(data) == yaml_emit.libyaml_dumps(data)


# text that tempts a writer: numbers and words YAML 1.1 and 1.2 read differently, indicators,
# quotes, long lines that fold, several lines, non-ASCII, control characters
_TRICKY = ["0048", "1e3", "0777", "yes", "on", "~", "null", "True", "12:30", "1_000", "+5", ".5", "-",
           "- x", "a: b", "a:", "x #y", "#x", "a,b", "[x", "x]", "{y}", "&a", "*a", "!t", "|", ">", "%x",
           "@x", "`x", "'q'", '"d"', "", " lead", "trail ", "two\nlines", "end\n", "tab\there", "\x1b[31m",
           "naïve", "日本", "\u2028", "---", "...", "? x", "<<", "a" * 130, ("word " * 40).strip(),
           "C:\\ClusterStorage\\Volume1", "2020-01-01", "10.0.0.1/16", "iqn.1991-05.com.microsoft:r710"]
_text = st.one_of(st.sampled_from(_TRICKY), st.text(max_size=30),
                  st.text(alphabet="ab :,#-'\"\n", max_size=130)).filter(lambda t: t != "not stated")
_scalar = st.one_of(_text, st.integers(-10**15, 10**15), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
                    st.dates(min_value=datetime.date(1900, 1, 1)))
_key = st.one_of(st.sampled_from(["id", "name", "note", "a b", "x:y", "0048", "yes", "k" * 40]),
                 st.text(alphabet="abc _-:#", min_size=1, max_size=12))
_flow = st.lists(_scalar, max_size=8).map(yaml_emit.Flow)
_flowmap = st.dictionaries(_key, _scalar, max_size=4).map(yaml_emit.FlowMap)
_data = st.recursive(st.one_of(_scalar, _flow, _flowmap),
                     lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_key, inner, max_size=5)),
                     max_leaves=25)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_key, _data, min_size=1, max_size=6))
def test_any_plain_data_is_written_as_libyaml_writes_it_and_reads_back_the_same(data):
    text = yaml_emit.dumps(data)
    assert text == yaml_emit.libyaml_dumps(data)
    assert yaml_bounded.parse(text) == data


def test_the_not_stated_marker_is_written_plain():
    assert yaml_emit.dumps({"memory_gb": "not stated"}) == "memory_gb: not stated\n"


@pytest.mark.parametrize("text", ["0048", "1e3", "1_000", "0777"])
def test_text_that_yaml_12_reads_as_a_number_is_quoted(text):
    written = yaml_emit.dumps({"serial": text})
    assert written == f"serial: '{text}'\n"
    assert yaml_bounded.parse(written) == {"serial": text}
