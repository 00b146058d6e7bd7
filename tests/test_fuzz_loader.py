"""Fuzzing every stage of a project file: no input makes load, validate, methodology, the
run plan, the Ansible export or save fail with anything but the loader's BedFileError.
`make fuzz` runs the same pipeline for longer (tests/fuzz_pipeline.py)."""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

import yaml
from beds import CLEAN_BED
from fuzz_pipeline import edit, mutate, run_pipeline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def must_load_or_explain(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_pipeline(text, Path(tmp))


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text(text):
    must_load_or_explain(text)


@st.composite
def mutated_beds(draw, alphabet=":-[]{}&*!|>'\"#%@ \n\t0123456789abcxyz.,/\\", longest=6):
    """The rule tests' clean bed with up to four runs of characters deleted, inserted or replaced."""
    text = CLEAN_BED
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "replace"]))
        chunk = draw(st.text(alphabet=alphabet, min_size=1, max_size=longest))
        text = edit(text, pos, action, chunk)
    return text


@FUZZ
@given(mutated_beds())
def test_mutated_project_file(text):
    must_load_or_explain(text)


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                      max_leaves=20)


SECTIONS = ["servers", "switches", "arrays", "networks", "links", "paths", "vms", "clusters", "workloads",
            "scenarios", "virtual_switches", "policy", "run_plan", "exceptions", "results", "bed"]
FIELDS = ["id", "name", "memory_gb", "ports", "adapters", "roles", "host", "disks", "members", "raid",
          "slots", "size_gb", "controllers", "enclosures", "volumes", "nodes", "a", "b", "target", "initiator"]


@FUZZ
@given(st.dictionaries(st.sampled_from(SECTIONS),
                       st.one_of(values, st.lists(st.dictionaries(st.sampled_from(FIELDS), values, max_size=6),
                                                  max_size=3)),
                       max_size=6))
def test_structurally_plausible_documents(doc):
    doc = {"format_version": 1, **doc}
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:
        return
    must_load_or_explain(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32))
def test_extreme_values_in_a_valid_bed_stop_at_load_or_go_through_every_stage(seed):
    must_load_or_explain(mutate(random.Random(seed), CLEAN_BED))
