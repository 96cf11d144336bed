"""parity.hw: the catalogue from Python matches the library's entries and fields."""

import json

import pytest

import parity


def test_names_lists_every_catalogue_gpu():
    names = parity.hw.names()
    for expected in ("h100", "h200", "b200", "gb200", "mi300x", "mi325x", "mi350x", "mi355x"):
        assert expected in names


def test_get_returns_fields_as_attributes_with_provenance():
    spec = parity.hw.get("mi350x")
    assert spec.name == "mi350x"
    assert spec.vendor == "amd"
    assert spec.hbm_capacity_gb == 288.0  # the brief's figure
    assert spec.dense_bf16_tflops == 2300.0
    assert spec.warp_size == 64.0
    assert spec.scale_up_topology == "full_mesh"
    provenance = spec.provenance("hbm_capacity_gb")
    assert provenance.kind == "vendor_spec" and provenance.source
    assert spec.quantity("hbm_bandwidth_tbps").unit == "TB/s"


def test_python_fields_match_the_library_quantity_list():
    keys = parity.hw.quantity_keys()
    spec = parity.hw.get("h200")
    assert list(spec.quantities) == keys
    for key in keys:
        assert getattr(spec, key) == spec.quantities[key].value


def test_json_text_round_trips_the_values():
    spec = parity.hw.get("b200")
    parsed = json.loads(spec.json)
    assert parsed["name"] == "b200"
    assert parsed["hbm_capacity_gb"]["value"] == spec.hbm_capacity_gb


def test_aliases_and_case_resolve_to_the_same_entry():
    assert parity.hw.get("H100-SXM") == parity.hw.get("h100")


def test_unknown_name_raises_value_error_listing_known_names():
    with pytest.raises(ValueError, match="unknown GPU 'nope'; known: .*mi350x"):
        parity.hw.get("nope")


def test_unknown_quantity_key_raises_key_error():
    with pytest.raises(KeyError, match="not a catalogue quantity"):
        parity.hw.get("h200").quantity("hbm_size")


def test_missing_data_dir_raises_an_error_not_a_crash(tmp_path):
    with pytest.raises((ValueError, RuntimeError)):
        parity.hw.get("h200", data_dir=str(tmp_path / "missing"))
