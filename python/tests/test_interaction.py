"""parity.torch's dot interaction (torch.ops.parity.dot_interaction, DotInteraction) against the shared
DLRM baseline's torch expression ``cat([x, bmm(z, z^T)[:, li, lj]], 1)``: forward, backward, bf16,
padding, gradcheck, torch.compile(fullgraph=True), bad input. Skipped without torch; runs on CUDA too
when the build has CUDA and a GPU is visible.

Tolerances (u: unit roundoff, 2^-24 for fp32, 2^-8 for bf16; |.|: the same expression in fp64 on the
inputs' absolute values, so "mag" bounds the sum of the terms' magnitudes):
- fp32 forward: each dot is a length-D fp32 sum; in any summation order it is within gamma_D ~ D*u32
  of the exact value relative to sum |z_i||z_j| (Higham, Accuracy and Stability, 3.1), so the op and
  bmm differ by at most 2*D*u32*mag. The dense columns are copies: exact.
- fp32 backward: dz_k is a sum of T pair terms plus, for the dense vector, the output's own gradient;
  torch forms it as (G Z) + (G^T Z), one more rounding: at most T+2 roundings on either side, so
  2*(T+2)*u32*mag.
- bf16: the inputs are bf16 (exact in fp32 and fp64); the op accumulates in fp32 and rounds once, so
  against the fp64 value of the same inputs: (u_bf16 + K*u32)*mag, K = D forward, T+2 backward.
- gradcheck: the output is bilinear, so central differences are exact for a quadratic; with
  small-integer inputs and eps = 0.5 every value is an exact fp32 integer: zero tolerance.
"""

import pytest

torch = pytest.importorskip("torch")
ptorch = pytest.importorskip("parity.torch")

import parity  # noqa: E402
from parity.torch.interaction import reference_dot_interaction  # noqa: E402

U32, UBF16 = 2.0**-24, 2.0**-8
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() and parity.build_info()["has_cuda"] else [])
SHAPES = [(5, 1, 4), (6, 3, 8), (9, 26, 16)]  # (B, T, D); T=26, D=16: dlrm-kaggle's interaction


def inputs(batch, features, dim, seed, device, dtype=torch.float32):
    generator = torch.Generator().manual_seed(seed)
    dense = torch.randn(batch, dim, generator=generator).to(device=device, dtype=dtype)
    embeddings = torch.randn(batch, features, dim, generator=generator).to(device=device, dtype=dtype)
    return dense, embeddings


def fp64_value_and_magnitude(dense, embeddings):
    exact = reference_dot_interaction(dense.double(), embeddings.double())
    magnitude = reference_dot_interaction(dense.double().abs(), embeddings.double().abs())
    return exact, magnitude


def fp64_grads_and_magnitudes(dense, embeddings, grad_output):
    """The gradients of the fp64 expression, and the same with every value replaced by its absolute value."""
    def grads(x, e, g):
        x, e = x.double().detach().requires_grad_(), e.double().detach().requires_grad_()
        reference_dot_interaction(x, e).backward(g.double())
        return x.grad, e.grad
    exact = grads(dense, embeddings, grad_output)
    magnitude = grads(dense.abs(), embeddings.abs(), grad_output.abs())
    return exact, magnitude


def assert_within(got, expected, bound, what):
    error = (got.double() - expected.double()).abs()
    worst = (error - bound).max().item()
    assert worst <= 0, f"{what}: error exceeds the bound by {worst:g} (max error {error.max().item():g})"


@pytest.mark.parametrize("device", DEVICES)
def test_pair_order_is_tril_indices(device):
    # z_0 = x = [1, 0], z_1 = [0, 2], z_2 = [3, 1]: pairs (1,0), (2,0), (2,1) -> 0, 3, 2.
    dense = torch.tensor([[1.0, 0.0]], device=device)
    embeddings = torch.tensor([[[0.0, 2.0], [3.0, 1.0]]], device=device)
    got = ptorch.dot_interaction(dense, embeddings)
    assert got.tolist() == [[1.0, 0.0, 0.0, 3.0, 2.0]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batch,features,dim", SHAPES)
@pytest.mark.parametrize("seed", [1, 2])
def test_fp32_forward_and_backward_match_the_torch_expression(device, batch, features, dim, seed):
    dense, embeddings = inputs(batch, features, dim, seed, device)
    ours = [t.clone().requires_grad_() for t in (dense, embeddings)]
    theirs = [t.clone().requires_grad_() for t in (dense, embeddings)]
    got = ptorch.dot_interaction(*ours)
    expected = reference_dot_interaction(*theirs)
    _, magnitude = fp64_value_and_magnitude(dense, embeddings)
    assert got.shape == expected.shape == (batch, dim + (features + 1) * features // 2) and got.dtype == torch.float32
    assert torch.equal(got[:, :dim], dense)
    assert_within(got, expected, 2 * dim * U32 * magnitude, f"forward seed={seed}")

    grad_output = torch.randn(got.shape, generator=torch.Generator().manual_seed(seed + 100)).to(device)
    got.backward(grad_output)
    expected.backward(grad_output)
    _, (dense_magnitude, embeddings_magnitude) = fp64_grads_and_magnitudes(dense, embeddings, grad_output)
    factor = 2 * (features + 2) * U32
    assert_within(ours[0].grad, theirs[0].grad, factor * dense_magnitude, f"grad dense seed={seed}")
    assert_within(ours[1].grad, theirs[1].grad, factor * embeddings_magnitude, f"grad embeddings seed={seed}")


@pytest.mark.parametrize("device", DEVICES)
def test_flat_embeddings_as_the_tbe_returns_them(device):
    dense, embeddings = inputs(4, 3, 8, 3, device)
    flat = embeddings.reshape(4, 24).requires_grad_()
    got = ptorch.dot_interaction(dense, flat)
    assert torch.equal(got, ptorch.dot_interaction(dense, embeddings))
    got.sum().backward()
    assert flat.grad.shape == (4, 24)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batch,features,dim", SHAPES)
def test_bf16_against_fp64(device, batch, features, dim):
    dense, embeddings = inputs(batch, features, dim, 5, device, torch.bfloat16)
    dense.requires_grad_()
    embeddings.requires_grad_()
    got = ptorch.dot_interaction(dense, embeddings)
    exact, magnitude = fp64_value_and_magnitude(dense.detach(), embeddings.detach())
    assert got.dtype == torch.bfloat16
    assert_within(got, exact, (UBF16 + dim * U32) * magnitude, "bf16 forward")
    grad_output = torch.randn(got.shape, generator=torch.Generator().manual_seed(6)).to(device, torch.bfloat16)
    got.backward(grad_output)
    (grad_dense, grad_embeddings), (dense_magnitude, embeddings_magnitude) = fp64_grads_and_magnitudes(
        dense.detach(), embeddings.detach(), grad_output)
    factor = UBF16 + (features + 2) * U32
    assert dense.grad.dtype == embeddings.grad.dtype == torch.bfloat16
    assert_within(dense.grad, grad_dense, factor * dense_magnitude, "bf16 grad dense")
    assert_within(embeddings.grad, grad_embeddings, factor * embeddings_magnitude, "bf16 grad embeddings")


@pytest.mark.parametrize("device", DEVICES)
def test_fp32_embeddings_with_bf16_dense_round_first_and_get_an_fp32_gradient(device):
    dense, embeddings = inputs(6, 4, 8, 7, device)
    dense = dense.to(torch.bfloat16).requires_grad_()
    embeddings.requires_grad_()
    got = ptorch.dot_interaction(dense, embeddings)
    assert torch.equal(got, ptorch.dot_interaction(dense.detach(), embeddings.detach().to(torch.bfloat16)))
    got.float().sum().backward()
    assert embeddings.grad.dtype == torch.float32
    rounded = embeddings.detach().to(torch.bfloat16).requires_grad_()
    ptorch.dot_interaction(dense.detach(), rounded).float().sum().backward()
    # The same fp32 sums; the bf16 path only rounds them once more.
    assert_within(rounded.grad, embeddings.grad, UBF16 * embeddings.grad.abs(), "fp32 vs bf16 gradient")


@pytest.mark.parametrize("device", DEVICES)
def test_padded_output_has_zero_columns_and_the_same_gradients(device):
    dense, embeddings = inputs(5, 3, 4, 8, device)  # 4 + 6 = 10 columns, padded to 16
    module = ptorch.DotInteraction(3, 4, pad_to=8)
    assert module.output_dim == 16 and module.unpadded_dim == 10
    x = dense.clone().requires_grad_()
    padded = module(x, embeddings)
    unpadded = ptorch.dot_interaction(dense, embeddings)
    # The GPU may pick another kernel for another stride: the same fp32 sums in another order.
    _, magnitude = fp64_value_and_magnitude(dense, embeddings)
    assert padded.shape == (5, 16) and torch.equal(padded[:, :4], dense)
    assert_within(padded[:, :10], unpadded, 2 * 4 * U32 * magnitude, "padded forward")
    assert torch.all(padded[:, 10:] == 0)
    grad_output = torch.randn(5, 16, generator=torch.Generator().manual_seed(9)).to(device)
    padded.backward(grad_output)
    y = dense.clone().requires_grad_()
    ptorch.dot_interaction(y, embeddings).backward(grad_output[:, :10])  # the padding's gradient is ignored
    _, (dense_magnitude, _) = fp64_grads_and_magnitudes(dense, embeddings, grad_output[:, :10])
    assert_within(x.grad, y.grad, 2 * (3 + 2) * U32 * dense_magnitude, "padded backward")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("output_stride", [0, 12])
@pytest.mark.filterwarnings("ignore:Input #:UserWarning")  # fp32 on purpose: exact here (see the docstring)
def test_gradcheck_exact_on_small_integers(device, output_stride):
    generator = torch.Generator().manual_seed(10)
    dense = torch.randint(-3, 4, (3, 4), generator=generator).float().to(device).requires_grad_()
    embeddings = torch.randint(-3, 4, (3, 2, 4), generator=generator).float().to(device).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, e: ptorch.dot_interaction(x, e, output_stride), (dense, embeddings),
                                    eps=0.5, atol=0.0, rtol=0.0, check_undefined_grad=False)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph_forward_and_backward(device):
    torch._dynamo.reset()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = torch.nn.Linear(5, 4)
            self.interaction = ptorch.DotInteraction(3, 4, pad_to=8)
            self.top = torch.nn.Linear(self.interaction.output_dim, 1)

        def forward(self, dense, embeddings):
            return self.top(self.interaction(torch.relu(self.bottom(dense)), embeddings)).sum()

    torch.manual_seed(11)
    eager = Model().to(device)
    compiled_model = Model().to(device)
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, fullgraph=True, backend="aot_eager")
    dense = torch.randn(6, 5, device=device)
    embeddings = torch.randn(6, 3, 4, device=device)
    eager_embeddings, compiled_embeddings = embeddings.clone().requires_grad_(), embeddings.clone().requires_grad_()
    eager(dense, eager_embeddings).backward()
    compiled(dense, compiled_embeddings).backward()
    # The same ops run in both (aot_eager only traces): equal results.
    torch.testing.assert_close(compiled_embeddings.grad, eager_embeddings.grad, rtol=0, atol=0)
    torch.testing.assert_close(compiled_model.bottom.weight.grad, eager.bottom.weight.grad, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_raises_value_error(device):
    dense, embeddings = inputs(4, 3, 8, 12, device)
    cases = [
        ((dense[:3], embeddings), "batch"),
        ((dense[:, :6], embeddings), "dim"),
        ((dense, embeddings.reshape(4, 24)[:, :20]), "multiple"),
        ((dense[0], embeddings), "dense"),
        ((dense, embeddings[:, :0]), "num_embeddings"),
        ((dense.double(), embeddings.double()), "dtype"),
        ((dense.half(), embeddings.half()), "dtype"),
        ((dense, embeddings.to(torch.bfloat16)), "embeddings: dtype"),
        ((dense[:0], embeddings[:0]), "batch_size"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            ptorch.dot_interaction(*args)
    with pytest.raises(ValueError, match="output_stride"):
        ptorch.dot_interaction(dense, embeddings, 10)  # below 8 + 6
    with pytest.raises(ValueError, match="expected"):
        ptorch.DotInteraction(2, 8)(dense, embeddings)
    with pytest.raises(ValueError, match="grad_output"):
        torch.ops.parity.dot_interaction_backward(dense, embeddings, torch.zeros(4, 13, device=device))


def collection_and_batch(device, batch=5, dim=8, seed=13):
    tables = [ptorch.EmbeddingBagConfig("t0", 30, dim, ("a", "b")), ptorch.EmbeddingBagConfig("t1", 20, dim, ("c",))]
    collection = ptorch.EmbeddingBagCollection(tables, seed=seed, device=device,
                                               optimizer=ptorch.OptimizerConfig("sgd", 0.5))
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, 4, (3 * batch,), generator=generator)
    values = torch.cat([torch.randint(0, 20, (int(n),), generator=generator) for n in lengths]).to(device)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lengths, 0)]).to(device)
    dense = torch.randn(batch, dim, generator=generator).to(device)
    return collection, values, offsets, dense


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_lookup_and_interaction_takes_the_separate_modules_steps(device, dtype):
    # Separate: the collection's fp32 output into the op (which rounds it to dense's dtype itself and
    # returns an fp32 gradient); fused: the TBE writes dense's dtype. Rounding an fp32 sum once to
    # bf16 is the same either way, and the TBE backward gets the same fp32 gradient: equal steps.
    separate, values, offsets, dense = collection_and_batch(device)
    fused_collection, _, _, _ = collection_and_batch(device)
    fused = ptorch.EmbeddingDotInteraction(fused_collection, pad_to=8)
    interaction = ptorch.DotInteraction(3, 8, pad_to=8)
    assert fused.output_dim == interaction.output_dim == 16
    for step in range(2):
        x_separate, x_fused = (dense.to(dtype).requires_grad_() for _ in range(2))
        out_separate = interaction(x_separate, separate(values, offsets))
        out_fused = fused(x_fused, values, offsets)
        assert torch.equal(out_fused, out_separate), f"step {step}"
        grad_output = torch.randn(out_fused.shape, generator=torch.Generator().manual_seed(step)).to(device, dtype)
        out_separate.backward(grad_output)
        out_fused.backward(grad_output)
        assert torch.equal(x_fused.grad, x_separate.grad), f"step {step}"
        assert torch.equal(fused_collection.weights, separate.weights), f"step {step}"
    assert fused_collection.optimizer_step.item() == 2
    assert not torch.equal(separate.weights, collection_and_batch(device)[0].weights)
    fused.eval()
    with torch.no_grad():
        assert torch.equal(fused(dense, values, offsets), interaction(dense, fused_collection(values, offsets)))


@pytest.mark.parametrize("device", DEVICES)
def test_fused_lookup_and_interaction_compiles_fullgraph(device):
    torch._dynamo.reset()
    eager_collection, values, offsets, dense = collection_and_batch(device)
    compiled_collection, _, _, _ = collection_and_batch(device)

    class Model(torch.nn.Module):
        def __init__(self, collection):
            super().__init__()
            self.interact = ptorch.EmbeddingDotInteraction(collection)
            self.top = torch.nn.Linear(self.interact.output_dim, 1)

        def forward(self, x, values, offsets):
            return self.top(self.interact(x, values, offsets)).sum()

    torch.manual_seed(14)
    eager = Model(eager_collection)
    compiled_model = Model(compiled_collection)
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model.to(device), fullgraph=True, backend="aot_eager")
    eager = eager.to(device)
    for _ in range(2):
        eager(dense, values, offsets).backward()
        compiled(dense, values, offsets).backward()
    torch.testing.assert_close(compiled_collection.weights, eager_collection.weights, rtol=0, atol=0)
    assert compiled_collection.optimizer_step.item() == 2


def test_fused_lookup_and_interaction_bad_input():
    tables = [ptorch.EmbeddingBagConfig("t0", 30, 8, ("a",)), ptorch.EmbeddingBagConfig("t1", 20, 4, ("b",))]
    with pytest.raises(ValueError, match="one dim"):
        ptorch.EmbeddingDotInteraction(ptorch.EmbeddingBagCollection(tables))
    collection, values, offsets, dense = collection_and_batch("cpu")
    with pytest.raises(ValueError, match="dtype"):
        ptorch.EmbeddingDotInteraction(collection)(dense.half(), values, offsets)
    with pytest.raises(ValueError, match="dense"):
        ptorch.EmbeddingDotInteraction(collection)(dense[:, :4], values, offsets)
