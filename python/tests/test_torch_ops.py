"""parity.torch: the ops and modules against torch.nn.EmbeddingBag and the fp64 reference, autograd
(gradcheck of the lookup's gradient through SGD), torch.compile(fullgraph=True), bad input.
Skipped when torch (or the package's torch ops) is missing. Runs on CUDA too when a GPU is visible.

Tolerances: forward as in test_tbe.py ((L+3)*u*sum|terms|); comparisons with nn.EmbeddingBag,
whose fp32 sums may run in another order, allow twice that.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ptorch = pytest.importorskip("parity.torch")

import parity  # noqa: E402
import tbe_reference as ref  # noqa: E402

U32 = 2.0**-24
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and parity.build_info()["has_cuda"] else [])


def stock_and_parity(device, mode="sum", padding_idx=None, rows=40, dim=12, seed=0):
    torch.manual_seed(seed)
    stock = torch.nn.EmbeddingBag(rows, dim, mode=mode, padding_idx=padding_idx).to(device)
    ours = ptorch.EmbeddingBag(rows, dim, mode=mode, padding_idx=padding_idx, _weight=stock.weight.detach(),
                               device=device).to(device)
    return stock, ours


def bound(magnitude_fp64, length):
    return 2 * (length + 3) * U32 * magnitude_fp64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("seed", [1, 2])
def test_embedding_bag_matches_nn_embedding_bag(device, mode, seed):
    stock, ours = stock_and_parity(device, mode, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, 6, (17,), generator=generator)
    values = torch.randint(0, 40, (int(lengths.sum()),), generator=generator).to(device)
    starts = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lengths, 0)[:-1]]).to(device)
    expected = stock(values, starts)
    got = ours(values, starts)
    magnitude = torch.nn.functional.embedding_bag(values, stock.weight.abs(), starts, mode=mode)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert torch.all((got - expected).abs() <= bound(magnitude, 5)), f"seed={seed}"


@pytest.mark.parametrize("device", DEVICES)
def test_two_dimensional_input_and_per_sample_weights(device):
    stock, ours = stock_and_parity(device, "sum")
    values = torch.randint(0, 40, (8, 3), device=device)
    weights = torch.rand(8, 3, device=device)
    expected = stock(values, per_sample_weights=weights)
    got = ours(values, per_sample_weights=weights)
    magnitude = torch.nn.functional.embedding_bag(values, stock.weight.abs(), per_sample_weights=weights, mode="sum")
    assert torch.all((got - expected).abs() <= bound(magnitude, 3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_padding_idx_is_left_out_of_the_bag(device, mode):
    stock, ours = stock_and_parity(device, mode, padding_idx=3)
    values = torch.tensor([[3, 1, 2], [3, 3, 3], [0, 3, 5]], device=device)
    expected = stock(values)
    got = ours(values)
    magnitude = torch.nn.functional.embedding_bag(values, stock.weight.abs(), mode=mode, padding_idx=3)
    assert torch.all((got - expected).abs() <= bound(magnitude, 3))
    assert torch.all(got[1] == 0)  # a bag of padding only


@pytest.mark.parametrize("device", DEVICES)
def test_empty_bags_give_zeros(device):
    stock, ours = stock_and_parity(device, "mean")
    assert torch.equal(ours(torch.zeros(3, 0, dtype=torch.long, device=device)), torch.zeros(3, 12, device=device))
    values = torch.tensor([5], device=device)
    got = ours(values, torch.tensor([0, 0, 1, 1], device=device))  # bags [], [], [5], []
    torch.testing.assert_close(got, stock(values, torch.tensor([0, 0, 1, 1], device=device)), rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_include_last_offset(device):
    stock = torch.nn.EmbeddingBag(10, 8, mode="sum", include_last_offset=True).to(device)
    ours = ptorch.EmbeddingBag(10, 8, mode="sum", include_last_offset=True, _weight=stock.weight.detach()).to(device)
    values = torch.tensor([1, 2, 3, 4], device=device)
    offsets = torch.tensor([0, 1, 4], device=device)
    torch.testing.assert_close(ours(values, offsets), stock(values, offsets), rtol=4 * U32, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_collection_matches_the_fp64_reference(device):
    tables = [ptorch.EmbeddingBagConfig("t0", 30, 8, ("a", "b")), ptorch.EmbeddingBagConfig("t1", 7, 16, ("c",))]
    collection = ptorch.EmbeddingBagCollection(tables, seed=5).to(device)
    layout = parity.tbe.Layout([(30, 8), (7, 16)], [0, 0, 1])
    rng = np.random.default_rng(5)
    indices, offsets = ref.random_batch(rng, layout, 6, 4)
    got = collection(torch.from_numpy(indices).to(device), torch.from_numpy(offsets).to(device))
    weights = collection.weights.detach().cpu().numpy()
    expected, magnitude = ref.forward(layout, weights, indices, offsets)
    error = np.abs(got.detach().cpu().numpy() - expected)
    assert np.all(error <= (4 + 3) * U32 * magnitude), f"max error {error.max()}"
    assert collection.feature_columns("c") == slice(16, 32)
    as_dict = collection.forward_dict({
        "a": (torch.tensor([1, 2], device=device), torch.tensor([0, 2], device=device)),
        "b": (torch.tensor([3], device=device), torch.tensor([0, 1], device=device)),
        "c": (torch.tensor([], dtype=torch.long, device=device), torch.tensor([0, 0], device=device)),
    })
    torch.testing.assert_close(as_dict["a"][0], (collection.table_weight("t0")[1] + collection.table_weight("t0")[2]))
    assert torch.all(as_dict["c"] == 0)


@pytest.mark.parametrize("device", DEVICES)
def test_backward_applies_sgd_like_torch(device):
    """The optimiser in the backward equals nn.EmbeddingBag + torch.optim.SGD on the same loss."""
    stock, ours = stock_and_parity(device, "mean", rows=20, dim=8)
    ours = ptorch.EmbeddingBag(20, 8, mode="mean", _weight=stock.weight.detach(),
                               optimizer=ptorch.OptimizerConfig("sgd", learning_rate=0.5)).to(device)
    sgd = torch.optim.SGD(stock.parameters(), lr=0.5)
    values = torch.tensor([[1, 2, 2], [4, 1, 0]], device=device)
    target = torch.randn(2, 8, device=device)
    for _ in range(3):
        sgd.zero_grad()
        ((stock(values) - target) ** 2).sum().backward()
        sgd.step()
        ((ours(values) - target) ** 2).sum().backward()
    assert ours.weight.grad is None  # the update happened in the backward
    assert ours.optimizer_state()["step"].item() == 3
    # Three steps of updates from sums of <= 3 gradient rows each: a few ulps of |w| per step.
    torch.testing.assert_close(ours.weight, stock.weight.detach(), rtol=64 * U32, atol=64 * U32)


@pytest.mark.parametrize("device", DEVICES)
def test_rowwise_adagrad_state_is_exported(device):
    ours = ptorch.EmbeddingBag(10, 4, mode="sum", optimizer=ptorch.OptimizerConfig("rowwise_adagrad", 0.1)).to(device)
    ours(torch.tensor([[1, 1, 3]], device=device)).sum().backward()
    state = ours.optimizer_state()
    assert state["state1"].shape == (10,)
    touched = (state["state1"] != 0).nonzero().flatten().tolist()
    assert touched == [1, 3]
    assert "optimizer_state1" in ours.state_dict()


def test_gradient_reaching_the_update_matches_autograd():
    """gradcheck of the gradient the op receives: with SGD (lr = 1) the weight change is minus the
    gradient, which must equal autograd's gradient of the same loss through torch's lookup
    (fp64, checked with gradcheck)."""
    torch.manual_seed(0)
    weight64 = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    values = torch.tensor([0, 2, 2, 5, 1], dtype=torch.long)
    offsets = torch.tensor([0, 2])  # bag starts: [0, 2], [2, 5]
    scale = torch.randn(2, 4, dtype=torch.float64)

    def loss_of(w):
        return (torch.nn.functional.embedding_bag(values, w, offsets, mode="mean") * scale).sum()

    assert torch.autograd.gradcheck(loss_of, (weight64,))
    (expected_grad,) = torch.autograd.grad(loss_of(weight64), weight64)
    ours = ptorch.EmbeddingBag(6, 4, mode="mean", _weight=weight64.detach().float(),
                               optimizer=ptorch.OptimizerConfig("sgd", learning_rate=1.0))
    before = ours.weight.detach().clone()
    (ours(values, offsets) * scale.float()).sum().backward()
    # w' = fl(w - g) is within u*|w'| of w - g, before - w' adds one rounding of |g| and the fp32
    # bag mean of <= 3 rows a few u*|g|: with |w| < 8 (randn) and |g| < 8, 4u*8 = 32u covers it.
    torch.testing.assert_close((before - ours.weight).double(), expected_grad, rtol=0, atol=32 * U32)


def test_ops_forward_agrees_with_the_numpy_binding():
    layout = parity.tbe.Layout([(9, 8), (5, 4)])
    config = ptorch.TbeConfig((9, 5), (8, 4), (0, 1), "sum", torch.float32, "sgd", 0.1, 1e-8, 0.0, "none", 0.0, 0.9, 0.999)
    weights = torch.randn(layout.total_weight_elements)
    indices = torch.tensor([0, 8, 4, 1], dtype=torch.int32)
    offsets = torch.tensor([0, 1, 2, 3, 4], dtype=torch.int32)  # 2 features x batch 2
    got = ptorch.ops.tbe_forward(config, weights, indices, offsets)
    expected = parity.tbe.forward(layout, weights.numpy(), indices.numpy(), offsets.numpy())
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph_forward_and_backward(device, backend):
    torch._dynamo.reset()
    tables = [ptorch.EmbeddingBagConfig("t0", 50, 8, ("a",)), ptorch.EmbeddingBagConfig("t1", 20, 8, ("b",))]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = ptorch.EmbeddingBagCollection(tables, seed=1,
                                                            optimizer=ptorch.OptimizerConfig("adam", 0.1))
            self.linear = torch.nn.Linear(16, 1)

        def forward(self, values, offsets):
            return self.linear(torch.relu(self.embeddings(values, offsets))).sum()

    eager, compiled_model = Model().to(device), Model().to(device)
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, fullgraph=True, backend=backend)
    values = torch.tensor([1, 2, 49, 7, 0, 19], device=device)  # a: [1, 2], [49]; b: [7, 0], [19]
    offsets = torch.tensor([0, 2, 3, 5, 6], device=device)
    for _ in range(2):
        eager(values, offsets).backward()
        compiled(values, offsets).backward()
    # Adam (state and the step counter in tensors), the bounds check and the update in the backward
    # graph: the compiled model takes the same steps as the eager one.
    torch.testing.assert_close(compiled_model.embeddings.weights, eager.embeddings.weights)
    assert compiled_model.embeddings.optimizer_step.item() == 2
    assert not torch.equal(eager.embeddings.weights, Model().to(device).embeddings.weights)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_raises_value_error(device):
    ours = ptorch.EmbeddingBag(10, 4, mode="sum").to(device)
    with pytest.raises(ValueError, match="value 10"):
        ours(torch.tensor([[1, 10]], device=device))
    with pytest.raises(ValueError, match="dtype"):
        ours(torch.tensor([[1.0, 2.0]], device=device))
    with pytest.raises(ValueError, match="per_sample_weights"):
        ptorch.EmbeddingBag(10, 4, mode="mean")(torch.tensor([[1]]), per_sample_weights=torch.ones(1, 1))
    with pytest.raises(ValueError, match="max"):
        ptorch.EmbeddingBag(10, 4, mode="max")
    with pytest.raises(ValueError, match="dim"):
        ptorch.EmbeddingBag(10, 6)
    config = ptorch.TbeConfig((10,), (4,), (0,), "sum", torch.float32, "sgd", 0.1, 1e-8, 0.0, "none", 0.0, 0.9, 0.999)
    weights = torch.zeros(40, device=device)
    with pytest.raises(ValueError, match="weights"):
        ptorch.ops.tbe_forward(config, weights[:-4], torch.tensor([1], device=device), torch.tensor([0, 1], device=device))
    bad_offsets = torch.tensor([0, 1, 1, 1], device=device)[:3].flip(0)
    with pytest.raises(ValueError, match="offsets"):
        if device == "cpu":  # the raw op checks values only on the host ...
            ptorch.ops.tbe_forward(config, weights, torch.tensor([1], device=device), bad_offsets)
        else:  # ... on the GPU that is the bounds check's job (what the modules call first)
            ptorch.ops.bounds_check(config, torch.tensor([1], device=device), bad_offsets, "error")
    with pytest.raises(ValueError, match="dtype"):
        ptorch.ops.tbe_forward(config, weights, torch.tensor([1], device=device), torch.tensor([0, 1], dtype=torch.int32, device=device))


def test_fix_mode_repairs_in_place():
    ours = ptorch.EmbeddingBag(10, 4, mode="sum", bounds_check="fix")
    values = torch.tensor([1, 12, -3])
    ours(values, torch.tensor([0]))
    assert values.tolist() == [1, 0, 0]
