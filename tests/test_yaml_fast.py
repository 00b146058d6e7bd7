"""The fast loading path (rapidyaml to JSON, topology/yaml_fast.py) reads every file exactly
as the bounded loader (topology/yaml_bounded.py) does, or hands it to the bounded loader.

"Exactly" is strict here: the same keys in the same order, the same types (1 is not 1.0 nor
True), the same NOT_STATED marker, and the same model once topology.fileformat has built it.
Every kind of doubt listed in yaml_fast's docstring is shown to go to the bounded loader."""
from __future__ import annotations

import datetime
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from beds import CLEAN_BED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_loader import mutated_beds
from test_hostile_values import hostile_values
from test_loader_bounds import HEAD, laughs

from topology import fileformat, yaml_bounded, yaml_fast
from topology.errors import BedFileError
from topology.synthetic import generate
from topology.unknown import NOT_STATED

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.yaml"))
# every other YAML the project ships or tests with: templates, test configurations
OTHER_YAML = sorted(p for p in [*(ROOT / "resources").rglob("*.yaml"), *(ROOT / "tests").rglob("*.yaml")]
                    if p not in EXAMPLES)

pytestmark = pytest.mark.skipif(yaml_fast.ryml is None, reason="rapidyaml is a dependency (pyproject.toml)")


def same(a, b) -> bool:
    """Equal, of the same types all the way down, keys in the same order."""
    if a is NOT_STATED or b is NOT_STATED:
        return a is b
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is float:
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    return bool(a == b)


def bounded_reading(text: str):
    try:
        return yaml_bounded.parse(text)
    except yaml_bounded.YamlProblem as exc:
        return exc


def agrees(text: str) -> bool:
    """The fast path either declines or gives the bounded loader's data (and only for a
    text the bounded loader accepts)."""
    fast = yaml_fast.parse(text)
    if fast is None:
        return True
    bounded = bounded_reading(text)
    return not isinstance(bounded, yaml_bounded.YamlProblem) and same(fast, bounded)


def takes_fast_path(text: str) -> bool:
    fast = yaml_fast.parse(text)
    return fast is not None and same(fast, yaml_bounded.parse(text))


def bounded_only_model(text: str, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(yaml_fast, "ryml", None)
        assert yaml_fast.parse(text) is None
        return fileformat.loads(text)


# --- the files the application meets --------------------------------------------------------

@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_example_reads_the_same_and_builds_the_same_model(path, monkeypatch):
    # the examples' hand-written comments and quoted text (`"Generate & Respond"`, a quoted
    # "2010" next to a plain 2010) may send them to the bounded loader: either way, the same
    text = path.read_text()
    assert agrees(text)
    fast_bed = fileformat.loads(text)
    assert fast_bed == bounded_only_model(text, monkeypatch)
    assert fileformat.dumps(fast_bed) == fileformat.dumps(bounded_only_model(text, monkeypatch))


def test_the_rule_tests_clean_bed_takes_the_fast_path_and_builds_the_same_model(monkeypatch):
    assert takes_fast_path(CLEAN_BED)
    assert fileformat.loads(CLEAN_BED) == bounded_only_model(CLEAN_BED, monkeypatch)


@pytest.mark.parametrize("path", OTHER_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_yaml_file_reads_the_same(path):
    assert agrees(path.read_text())


@pytest.mark.parametrize("size", [dict(hosts=40, vms=200, arrays=3, disks=300, scenarios=True),
                                  dict(hosts=7, vms=9, arrays=1, disks=20, pins=True)])
def test_synthetic_beds_take_the_fast_path_and_build_the_same_model(size, monkeypatch):
    text = fileformat.dumps(generate(**size))
    assert takes_fast_path(text)
    assert fileformat.loads(text) == bounded_only_model(text, monkeypatch)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_saved_again_reads_the_same_and_builds_the_same_model(path, monkeypatch):
    text = fileformat.dumps(fileformat.loads(path.read_text()))
    assert agrees(text)
    assert fileformat.loads(text) == bounded_only_model(text, monkeypatch)


# --- the hostile inputs the other loader tests use --------------------------------------------

@pytest.mark.parametrize("name", list(hostile_values(Path("/canary"))))
def test_hostile_values_in_a_bed_read_the_same_however_they_are_quoted(name, monkeypatch):
    value = hostile_values(Path("/canary"))[name]
    for style in ('"', "'", None):
        try:
            scalar = yaml.safe_dump(value, default_style=style, width=10**6).removesuffix("\n...\n").strip()
        except yaml.YAMLError:
            continue
        text = CLEAN_BED.replace("name: two-node iSCSI cluster", f"name: {scalar}", 1)
        assert agrees(text), (name, style)
        bounded = bounded_reading(text)
        if not isinstance(bounded, yaml_bounded.YamlProblem) and yaml_fast.parse(text) is not None:
            try:
                model = fileformat.loads(text)
            except BedFileError as exc:
                with pytest.raises(BedFileError) as slow:
                    bounded_only_model(text, monkeypatch)
                assert str(slow.value) == str(exc)
            else:
                assert model == bounded_only_model(text, monkeypatch)


@pytest.mark.parametrize("text", [
    laughs(9, 9, "lol"),
    laughs(3, 3, "x", where="bed"),
    HEAD + "settings: &a [*a]\n",
    HEAD + "settings: {a: *nothing}\n",
    HEAD + "settings:\n  base: &b {x: 1}\n  more: {<<: *b, y: 2}\n",
    HEAD + "settings: {a: \"a\x00b\"}\n",
    HEAD + "settings: {a: a\x00b}\n",
    *(HEAD + f"settings: {{a: {v}}}\n" for v in (".inf", "-.inf", "99999999999999999999", "1e400",
                                                 "1000000000000000", "-1000000000000000", "1e15", "0x10")),
    *(HEAD + f"servers:\n  - id: {bad}\n" for bad in ("'../x'", "a/b", "'a\\b'", "'.'", "'..'", '"a\\u0001b"')),
], ids=lambda t: repr(t[len(HEAD):][:30]))
def test_loader_bound_inputs_read_the_same(text):
    assert agrees(text)


def test_a_bomb_of_aliases_never_reaches_rapidyaml():
    assert yaml_fast.parse(laughs(9, 9, "lol")) is None
    with pytest.raises(BedFileError, match="alias"):
        fileformat.loads(laughs(9, 9, "lol"))


# --- every doubt in the docstring goes to the bounded loader ----------------------------------

S = HEAD + "settings:\n"
DOUBTS = {
    "anchor and alias": (S + "  a: &x 1\n  b: *x\n", {"a": 1, "b": 1}),
    "merge key": (S + "  base: &b {x: 1}\n  more: {<<: *b, y: 2}\n", {"base": {"x": 1}, "more": {"x": 1, "y": 2}}),
    "tag": (S + "  a: !!str x\n", {"a": "x"}),
    "directive": ("%YAML 1.1\n---\n" + S + "  a: 1\n", {"a": 1}),
    "explicit key": (S + "  ? a\n  : 1\n", {"a": 1}),
    "tab in a quoted value": (S + "  a: \"x\ty\"\n", {"a": "x\ty"}),
    "tab as indentation": (S + "\ta: 1\n", None),
    "duplicate key": (S + "  a: 1\n  a: 2\n", None),
    "deep nesting in flow": (S + "  a: " + "[" * 61 + "]" * 61 + "\n", None),
    "deep nesting in block": (S + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(61)) + "  " * 62 + "v: 1\n", None),
    "number past 10**15": (S + "  a: 1000000000000001\n", None),
    "float past 10**15": (S + "  a: 1.5e16\n", None),
    "overflowing float": (S + "  a: 1e400\n", None),
    "zero-padded number": (S + "  a: 0048\n", {"a": 48}),
    "tilde": (S + "  a: ~\n", {"a": None}),
    "capital True": (S + "  a: True\n", {"a": True}),
    "capital NULL": (S + "  a: NULL\n", {"a": None}),
    "date": (S + "  a: 2020-01-01\n", {"a": datetime.date(2020, 1, 1)}),
    "infinity": (S + "  a: .inf\n", None),
    "not a number": (S + "  a: .nan\n", None),
    "point first": (S + "  a: -.5\n", {"a": "-.5"}),
    "true as a key": (S + "  true: 1\n", {"True": 1}),   # a key is text: the bounded loader's str(True)
    "reserved indicator @": (S + "  a: @x\n", None),
    "reserved indicator backtick": (S + "  a: `x`\n", None),
    "colon before a flow indicator": (S + "  a: {b:, c: 1}\n", None),
    "more than one document": (S + "  a: 1\n---\nb: 2\n", None),
    "a list as a key": (S + "  [a, b]: 1\n", None),
    "lone carriage returns": ((S + "  a: 1\n").replace("\n", "\r"), {"a": 1}),
    "byte-order mark": ("\ufeff" + S + "  a: 1\n", {"a": 1}),
    "NEL": (S + "  a: \"x\x85y\"\n", {"a": "x y"}),
    "line separator": (S + "  a: \"x\u2028y\"\n", {"a": "x\u2028y"}),
    "paragraph separator": (S + "  a: \"x\u2029y\"\n", {"a": "x\u2029y"}),
    "control character": (S + "  a: \"x\x1by\"\n", None),
}


@pytest.mark.parametrize("kind", list(DOUBTS))
def test_each_kind_of_doubt_goes_to_the_bounded_loader(kind):
    text, settings_read = DOUBTS[kind]
    assert yaml_fast.parse(text) is None
    bounded = bounded_reading(text)
    if settings_read is None:
        assert isinstance(bounded, yaml_bounded.YamlProblem)
        with pytest.raises(yaml_bounded.YamlProblem):
            yaml_fast.read(text)
    else:
        assert same(yaml_fast.read(text)["settings"], settings_read)
        assert same(bounded["settings"], settings_read)


@pytest.mark.parametrize("value,reading", [("'0048'", "0048"), ("'2020-01-01'", "2020-01-01"), ("'~'", "~"),
                                           ("'True'", "True"), ('"-.5"', "-.5"), ("'a@b'", "a@b"),
                                           ("not stated", NOT_STATED), ("'not stated'", NOT_STATED),
                                           ("1.5", 1.5), ("-1.5", -1.5), ("1e3", 1000.0),
                                           ("999999999999999", 10**15 - 1),
                                           ("admin@lab", "admin@lab"), ("fe80::1", "fe80::1")])
def test_what_is_sure_stays_on_the_fast_path(value, reading):
    text = S + f"  a: {value}\n"
    assert takes_fast_path(text)
    assert same(yaml_fast.parse(text)["settings"]["a"], reading)


def test_quoted_numbers_beside_the_same_numbers_written_plain_stay_on_the_fast_path():
    """Switch ports named '1', '2' in a file that also has vcpu: 1 (every real bed with numbered
    ports): the quoted ones are text, the plain ones numbers, on both paths."""
    text = S + "  ports: ['1', '2', '10', '-3', '1.5']\n  count: 1\n  speed: 2\n  ratio: 1.5\n  id: '0'\n  n: 0\n"
    assert takes_fast_path(text)
    assert same(yaml_fast.parse(text), yaml_bounded.parse(text))
    assert yaml_fast.parse(text)["settings"]["ports"] == ["1", "2", "10", "-3", "1.5"]
    assert yaml_fast.parse(text)["settings"]["count"] == 1


def test_a_text_written_many_times_is_looked_at_once_and_a_doubt_in_its_repeat_still_counts(monkeypatch):
    """A 5,000-device bed writes switch ports '1' to '48' some 50,000 times: each text is weighed
    once (the weighing was a fifth of the fast path's time there)."""
    weighed: list[str] = []
    weigh = yaml_fast._reads_as_written
    monkeypatch.setattr(yaml_fast, "_reads_as_written", lambda written, *rest: (weighed.append(written),
                                                                                weigh(written, *rest))[1])
    text = S + "".join(f"  s{i}: {{ports: ['1', '2', '3'], up: '0048'}}\n" for i in range(200))
    assert takes_fast_path(text)
    assert sorted(weighed) == ["0048", "1", "2", "3"]
    assert same(yaml_fast.parse(text), yaml_bounded.parse(text))
    assert yaml_fast.parse(text + "  plain: 0048\n") is None, "one plain 0048 among the quoted ones"


def test_windows_line_ends_stay_on_the_fast_path():
    text = CLEAN_BED.replace("\n", "\r\n")
    assert takes_fast_path(text)


def test_without_rapidyaml_every_file_is_read_by_the_bounded_loader(monkeypatch):
    monkeypatch.setattr(yaml_fast, "ryml", None)
    assert yaml_fast.parse(CLEAN_BED) is None
    assert same(yaml_fast.read(CLEAN_BED), yaml_bounded.parse(CLEAN_BED))


# --- messages still carry the file and the line --------------------------------------------------

def test_a_model_error_in_a_fast_read_file_names_the_file_and_the_line():
    text = CLEAN_BED.replace("memory_gb: 48", "memory_gb: lots", 1)
    assert takes_fast_path(text)
    line = text.splitlines().index("    memory_gb: lots") + 1
    with pytest.raises(BedFileError) as err:
        fileformat.loads(text, "lab.yaml")
    assert re.search(rf"lab\.yaml:{line}\b", str(err.value)), str(err.value)


def test_a_broken_reference_in_a_fast_read_file_names_the_file_and_the_line():
    text = CLEAN_BED.replace("network: lan}", "network: lna}", 1)
    assert takes_fast_path(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "network: lna}" in s)
    with pytest.raises(BedFileError) as err:
        fileformat.loads(text, "lab.yaml")
    assert re.search(rf"lab\.yaml:{line}\b", str(err.value)) and "'lna'" in str(err.value), str(err.value)


def test_a_syntax_error_names_the_file_and_the_line():
    text = CLEAN_BED.replace("memory_gb: 48", "memory_gb: [48", 1)
    assert yaml_fast.parse(text) is None
    with pytest.raises(BedFileError) as err:
        fileformat.loads(text, "lab.yaml")
    assert "lab.yaml:" in str(err.value)


# --- properties ----------------------------------------------------------------------------------

DIFF = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@DIFF
@given(mutated_beds(alphabet=":-[]{}&*!|>'\"#%@ \n\t\r0123456789abcexyzTNL.,/\\~+_`?", longest=8))
def test_a_mutated_bed_reads_the_same_on_both_paths(text):
    assert agrees(text)


@DIFF
@given(st.text(max_size=300))
def test_arbitrary_text_reads_the_same_on_both_paths(text):
    assert agrees(text)


SCALAR_TEXT = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"\A[-+]?[0-9_]{0,18}(\.[0-9_]{0,6})?([eE][-+]?[0-9]{1,3})?\Z"),
    st.sampled_from(["~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "yes", "no", "on", "off",
                     ".inf", "-.Inf", ".NaN", "2020-01-01", "2001-12-14t21:59:43.10-05:00", "0x1F", "0o17",
                     "0b101", "1:30", "<<", "=", "not stated", "", "-", "- a", "a: b", "#", "0048"]))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**16, 10**16),
                    st.floats(allow_nan=True, allow_infinity=True), SCALAR_TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(SCALAR_TEXT, inner, max_size=4)),
                      max_leaves=25)


@DIFF
@given(VALUES, st.sampled_from([None, True, False]), st.sampled_from([None, "'", '"']))
def test_any_data_written_plain_quoted_or_in_flow_reads_the_same_on_both_paths(value, flow, style):
    text = yaml.safe_dump({"settings": value}, default_flow_style=flow, default_style=style, allow_unicode=True)
    assert agrees(text)
    if style is None and flow is False:   # written as block YAML, still plain text: unquote what yaml quoted
        assert agrees(text.replace("'", ""))


# --- memory ----------------------------------------------------------------------------------------

def test_the_fast_path_holds_a_small_multiple_of_the_file_in_memory(tmp_path):
    # rapidyaml's tree and the JSON live only while the data is built: the peak grows with
    # the file, as on the bounded path (a fresh process, so the peak is this read's own)
    bed = tmp_path / "bed.yaml"
    bed.write_text(fileformat.dumps(generate(hosts=200, vms=2000, arrays=10, disks=1000, pins=False)))
    probe = ("import resource, sys\n"
             "from topology import yaml_fast\n"
             "text = open(sys.argv[1]).read()\n"
             "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "assert yaml_fast.parse(text) is not None\n"
             "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 / len(text))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(bed)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 40   # measured: 17 bytes held per byte of text


# --- the parse tree's size hint --------------------------------------------------------------

def _tree_nodes(text: str) -> int:
    return yaml_fast.ryml.parse_in_place(bytearray(text.encode())).size()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_tree_is_reserved_at_its_full_size_for_each_example(path):
    # a hint short of the tree's size makes rapidyaml grow it while parsing (3x the time)
    text = path.read_text()
    assert yaml_fast._nodes_at_most(text.encode()) >= _tree_nodes(text)


def test_the_tree_is_reserved_at_its_full_size_for_a_generated_bed():
    text = fileformat.dumps(generate(hosts=20, vms=100, arrays=2, disks=60, pins=False, scenarios=True))
    assert yaml_fast._nodes_at_most(text.encode()) >= _tree_nodes(text) > 1000


def test_commas_inside_quotes_reserve_no_more_than_the_file_size_allows():
    # one scalar of a million commas is one node: the hint must not reserve a million (140 MB)
    text = 'bed: {name: "' + "," * 1_000_000 + '"}\nformat_version: 1\n'
    assert yaml_fast._nodes_at_most(text.encode()) <= len(text) // 8 + 16
    assert yaml_fast.parse(text)["bed"]["name"] == "," * 1_000_000
