"""The package itself: version and build provenance, the exception types, the packaged data."""

import os

import parity


def test_build_info_names_version_and_commit():
    info = parity.build_info()
    assert info["version"] == parity.__version__
    assert info["git_sha"]
    assert isinstance(info["has_cuda"], bool)
    assert info["gpu_device_count"] >= 0


def test_unsupported_error_is_a_runtime_error():
    # kUnsupported arrives as parity.UnsupportedError: a NotImplementedError, hence a RuntimeError.
    assert issubclass(parity.UnsupportedError, NotImplementedError)
    assert issubclass(parity.UnsupportedError, RuntimeError)


def test_installed_package_carries_its_catalogue():
    data = os.path.join(os.path.dirname(parity.__file__), "data", "hardware")
    assert os.path.isdir(data), "the wheel must hold parity/data/hardware"
    assert any(name.endswith(".json") for name in os.listdir(data))
