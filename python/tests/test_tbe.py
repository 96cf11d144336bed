"""parity.tbe on numpy arrays against the plain numpy fp64 reference (tbe_reference.py).

Tolerances (fp32 unit roundoff u = 2^-24):
- forward: a bag of L terms summed in fp32 is within gamma_L * sum|terms| of the exact sum
  (gamma_L = L*u / (1 - L*u) <= (L+1)*u for L*u << 1), plus one rounding of the output (u*|out|)
  and, for mean pooling, one more rounding of the scale; we allow (L+3)*u*sum|terms|.
- SGD update w' = w - lr*G: the fp32 gradient sum of n terms is within (n+1)*u*sum|g| of G, the
  product with lr and the subtraction add one rounding each of |lr*G| and |w'|.
"""

import numpy as np
import pytest

import parity
import tbe_reference as ref

U32 = 2.0**-24
SEEDS = [1, 2, 3]


def make_layout():
    # Mixed dims (4..132, not multiples of 8), features sharing a table.
    return parity.tbe.Layout([(50, 4), (7, 12), (300, 132), (1, 8)], table_of_feature=[0, 1, 2, 3, 2])


def random_weights(rng, layout):
    return rng.uniform(-1, 1, layout.total_weight_elements).astype(np.float32)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pooling", ["sum", "mean"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("weighted", [False, True])
def test_forward_matches_reference(seed, pooling, index_dtype, weighted):
    rng = np.random.default_rng(seed)
    layout = make_layout()
    weights = random_weights(rng, layout)
    batch_size, max_bag = 9, 6
    indices, offsets = ref.random_batch(rng, layout, batch_size, max_bag, index_dtype)
    psw = rng.uniform(0.5, 2.0, indices.size).astype(np.float32) if weighted else None
    got = parity.tbe.forward(layout, weights, indices, offsets, pooling=pooling, per_sample_weights=psw)
    expected, magnitude = ref.forward(layout, weights, indices, offsets, pooling, psw)
    assert got.shape == expected.shape and got.dtype == np.float32
    bound = (max_bag + 3) * U32 * magnitude
    error = np.abs(got - expected)
    assert np.all(error <= bound), f"seed={seed}: max error {error.max()} at {np.unravel_index(error.argmax(), error.shape)}"


def test_forward_small_integers_is_exact_and_empty_bags_are_zero():
    layout = parity.tbe.Layout([(4, 4), (3, 8)])
    weights = np.arange(layout.total_weight_elements, dtype=np.float32)
    # batch 2: feature 0 bags [0,1] and []; feature 1 bags [2] and [0, 0]
    indices = np.array([0, 1, 2, 0, 0], np.int64)
    offsets = np.array([0, 2, 2, 3, 5], np.int64)
    got = parity.tbe.forward(layout, weights, indices, offsets)
    expected, _ = ref.forward(layout, weights, indices, offsets)
    np.testing.assert_array_equal(got, expected.astype(np.float32))
    assert np.all(got[1, :4] == 0)  # empty bag
    mean = parity.tbe.forward(layout, weights, indices, offsets, pooling="mean")
    assert np.all(mean[1, :4] == 0)  # mean of an empty bag is 0


def test_forward_unpooled_returns_one_row_per_index():
    layout = parity.tbe.Layout([(5, 8), (6, 8)])
    weights = np.arange(layout.total_weight_elements, dtype=np.float32)
    indices = np.array([4, 0, 5], np.int64)
    offsets = np.array([0, 2, 3], np.int64)  # batch 1: feature 0 reads 4, 0; feature 1 reads 5
    got = parity.tbe.forward(layout, weights, indices, offsets, pooling="none")
    assert got.shape == (3, 8)
    np.testing.assert_array_equal(got[0], layout.table_view(weights, 0)[4])
    np.testing.assert_array_equal(got[2], layout.table_view(weights, 1)[5])


def test_forward_fp16_weights_and_bf16_output():
    rng = np.random.default_rng(7)
    layout = parity.tbe.Layout([(20, 8)])
    weights16 = rng.uniform(-1, 1, layout.total_weight_elements).astype(np.float16)
    indices, offsets = ref.random_batch(rng, layout, 4, 3)
    got16 = parity.tbe.forward(layout, weights16, indices, offsets, output_dtype="fp16")
    expected, magnitude = ref.forward(layout, weights16.astype(np.float32), indices, offsets)
    # fp32 accumulation, then one fp16 rounding of the output (u16 = 2^-11).
    assert np.all(np.abs(got16.astype(np.float64) - expected) <= 2.0**-11 * np.abs(expected) + 6 * U32 * magnitude + 1e-30)
    bits = parity.tbe.forward(layout, weights16, indices, offsets, output_dtype="bf16")
    as_float = (bits.astype(np.uint32) << 16).view(np.float32)
    assert np.all(np.abs(as_float - expected) <= 2.0**-8 * np.abs(expected) + 6 * U32 * magnitude + 1e-30)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pooling", ["sum", "mean"])
def test_backward_sgd_matches_reference(seed, pooling):
    rng = np.random.default_rng(seed)
    layout = make_layout()
    weights = random_weights(rng, layout)
    before = weights.copy()
    indices, offsets = ref.random_batch(rng, layout, 8, 5)
    grad = rng.uniform(-1, 1, (8, layout.total_output_dim)).astype(np.float32)
    lr = 0.5
    optimizer = parity.tbe.Optimizer("sgd", learning_rate=lr)
    state = optimizer.init_state(layout)
    parity.tbe.backward_fused(layout, weights, state, indices, offsets, grad, optimizer=optimizer, pooling=pooling)
    grads, counts = ref.row_gradients(layout, indices, offsets, grad, pooling)
    expected = before.astype(np.float64)
    bound = np.zeros_like(expected)
    for (table, row), g in grads.items():
        dim = layout.tables[table][1]
        start = layout.weights_offsets[table] + row * dim
        expected[start : start + dim] -= lr * g
        bound[start : start + dim] = (counts[(table, row)] + 1) * U32 * lr * counts[(table, row)] * np.abs(grad).max()
    bound += 2 * U32 * (np.abs(expected) + lr * np.abs(expected - before))
    error = np.abs(weights - expected)
    assert np.all(error <= bound), f"seed={seed}: max error {error.max()} at {error.argmax()}"
    untouched = bound == 2 * U32 * (np.abs(expected) + lr * np.abs(expected - before))
    np.testing.assert_array_equal(weights[untouched & (expected == before)], before[untouched & (expected == before)])


@pytest.mark.parametrize("seed", SEEDS)
def test_backward_rowwise_adagrad_matches_reference(seed):
    rng = np.random.default_rng(seed)
    layout = parity.tbe.Layout([(30, 16), (10, 4)])
    weights = random_weights(rng, layout)
    indices, offsets = ref.random_batch(rng, layout, 6, 4)
    grad = rng.uniform(-1, 1, (6, layout.total_output_dim)).astype(np.float32)
    optimizer = parity.tbe.Optimizer("rowwise_adagrad", learning_rate=0.1, eps=1e-2)
    state = optimizer.init_state(layout)
    assert state[0].shape == (layout.total_rows,) and state[1].size == 0
    expected = weights.astype(np.float64)
    expected_state = np.zeros(layout.total_rows)
    grads, _ = ref.row_gradients(layout, indices, offsets, grad)
    for (table, row), g in grads.items():
        dim = layout.tables[table][1]
        global_row = layout.row_bases[table] + row
        expected_state[global_row] += np.mean(g * g)
        start = layout.weights_offsets[table] + row * dim
        expected[start : start + dim] -= 0.1 * g / (np.sqrt(expected_state[global_row]) + 1e-2)
    parity.tbe.backward_fused(layout, weights, state, indices, offsets, grad, optimizer=optimizer)
    # Normalised step: relative error a few hundred u (gradient sums of <= 24 terms, the mean of
    # squares over D <= 16, sqrt and division) on a step <= lr / (|g|/sqrt(D) ...); 1e-4 absolute is
    # ~1700 u of the largest step (lr * sqrt(D) = 0.4) and far below any wrong update.
    np.testing.assert_allclose(state[0], expected_state, rtol=64 * U32 * 30, atol=0)
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-4)


def test_bounds_check_error_mode_names_the_bad_index_and_changes_nothing():
    layout = parity.tbe.Layout([(5, 4), (3, 4)])
    indices = np.array([0, 4, 1, 3, 2], np.int64)  # feature 1 (3 rows) reads 3
    offsets = np.array([0, 2, 3, 4, 5], np.int64)  # batch 2
    with pytest.raises(ValueError, match="3"):
        parity.tbe.bounds_check(layout, indices, offsets, mode="error")
    np.testing.assert_array_equal(indices, [0, 4, 1, 3, 2])


def test_bounds_check_fix_mode_repairs_in_place_and_reports():
    layout = parity.tbe.Layout([(5, 4)])
    indices = np.array([0, 7, -1, 2], np.int64)
    offsets = np.array([0, 2, 4], np.int64)
    report = parity.tbe.bounds_check(layout, indices, offsets, mode="fix")
    assert report.bad_indices == 2 and report.first_bad_position == 1 and report.first_bad_value == 7
    np.testing.assert_array_equal(indices, [0, 0, 0, 2])
    assert parity.tbe.bounds_check(layout, indices, offsets).is_clean


def test_forward_rejects_bad_indices_by_default():
    layout = parity.tbe.Layout([(5, 4)])
    weights = np.zeros(layout.total_weight_elements, np.float32)
    with pytest.raises(ValueError, match="5"):
        parity.tbe.forward(layout, weights, np.array([5], np.int64), np.array([0, 1], np.int64))


@pytest.mark.parametrize(
    "make_call, message",
    [
        (lambda L, w: parity.tbe.forward(L, w[:-1], np.array([0]), np.array([0, 1])), "weights"),
        (lambda L, w: parity.tbe.forward(L, w, np.array([0]), np.array([0, 3])), "offset"),
        (lambda L, w: parity.tbe.forward(L, w, np.array([0], np.int32), np.array([0, 1])), "offsets"),
        (lambda L, w: parity.tbe.forward(L, w, np.array([0]), np.array([0, 1]), pooling="max"), "max"),
        (lambda L, w: parity.tbe.forward(L, w.astype(np.float64), np.array([0]), np.array([0, 1])), "weight_dtype=fp64"),
        (lambda L, w: parity.tbe.forward(L, w, np.array([0.5]), np.array([0, 1])), "indices"),
        (lambda L, w: parity.tbe.forward(L, w, np.array([0]), np.array([0, 1]), per_sample_weights=np.ones(2, np.float32)), "per_sample_weights"),
        (lambda L, w: parity.tbe.backward_fused(L, w, (np.zeros(0, np.float32),) * 2, np.array([0]), np.array([0, 1]), np.zeros((1, 3), np.float32)), "grad_output"),
        (lambda L, w: parity.tbe.backward_fused(L, w, (np.zeros(0, np.float32),) * 2, np.array([0]), np.array([0, 1]), np.zeros((1, 4), np.float32), optimizer=parity.tbe.Optimizer("rowwise_adagrad")), "state1"),
        (lambda L, w: parity.tbe.backward_fused(L, w, (np.zeros(0, np.float32),) * 2, np.array([0]), np.array([0, 1]), np.zeros((1, 4), np.float32), optimizer=parity.tbe.Optimizer("lamb")), "lamb"),
        (lambda L, w: parity.tbe.backward_fused(L, w, (np.zeros(0, np.float32),) * 2, np.array([0]), np.array([0, 1]), np.zeros((1, 4), np.float32), optimizer=parity.tbe.Optimizer(learning_rate=-1)), "learning_rate"),
    ],
)
def test_bad_input_raises_value_error_naming_it(make_call, message):
    layout = parity.tbe.Layout([(5, 4)])
    weights = np.zeros(layout.total_weight_elements, np.float32)
    with pytest.raises(ValueError, match=message):
        make_call(layout, weights)


@pytest.mark.parametrize(
    "tables, features, message",
    [([(5, 6)], None, "dim"), ([(5, 4)], [1], "table_of_feature"), ([], None, "table"), ([(-1, 4)], None, "rows")],
)
def test_bad_layout_raises_value_error(tables, features, message):
    with pytest.raises(ValueError, match=message):
        parity.tbe.Layout(tables, features)
