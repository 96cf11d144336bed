"""parity.gemm.select: the library's selector with its explanation; bad input raises."""

import pytest

import parity


def test_select_returns_the_choice_with_prediction_and_breakdown():
    selection = parity.gemm.select(4096, 4096, 4096, hw="h200", dtype="bf16", top=3)
    assert selection.hw == "h200"
    assert len(selection.top) == 3
    assert selection.choice is selection.top[0]
    assert selection.candidates >= len(selection.top)
    predicted = [row.predicted_us for row in selection.top]
    assert predicted == sorted(predicted)  # best first
    choice = selection.choice
    assert choice.predicted_us > 0
    # TFLOP/s is 2MNK over the predicted time.
    assert choice.predicted_tflops == pytest.approx(2 * 4096**3 / (choice.predicted_us * 1e-6) / 1e12, rel=1e-9)
    assert choice.breakdown.total_us > 0
    assert "choice: " + choice.short_name in selection.explanation
    assert "compute" in selection.explanation  # the per-candidate breakdown


def test_amd_selection_is_labelled_as_modelled():
    selection = parity.gemm.select(8192, 8192, 8192, hw="mi350x")
    assert "not a measurement" in selection.basis


def test_same_input_gives_the_same_choice():
    first = parity.gemm.select(1024, 3072, 768, hw="h100", dtype="fp16")
    second = parity.gemm.select(1024, 3072, 768, hw="h100", dtype="fp16")
    assert first.choice == second.choice


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(m=0, n=16, k=16), "m"),
        (dict(m=16, n=16, k=16, dtype="int7"), "int7"),
        (dict(m=16, n=16, k=16, layout="XY"), "XY"),
        (dict(m=16, n=16, k=16, top=0), "top"),
        (dict(m=16, n=16, k=16, hw="tpu9"), "tpu9"),
    ],
)
def test_bad_input_raises_value_error_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=message):
        parity.gemm.select(**kwargs)
