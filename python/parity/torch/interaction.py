"""DLRM's dot interaction as a torch op over the library's kernels: ``torch.ops.parity.dot_interaction``
(fake kernel and autograd registered here, the backward being ``dot_interaction_backward``) and the
:class:`DotInteraction` module.

For dense ``x`` ``[B, D]`` and pooled embeddings ``[B, T, D]`` (or ``[B, T*D]``, the TBE's output) the
output is ``[B, D + (T+1)T/2]``: ``x`` followed by the dots ``z_i . z_j`` of ``z = [x, e_0, ...,
e_{T-1}]`` strictly below the diagonal in row-major order (``torch.tril_indices(T+1, T+1, -1)``), i.e.
``cat([x, bmm(z, z^T)[:, li, lj]], 1)``. With ``output_stride`` wider than that, zero columns pad each
row (a next GEMM's rows then stay 16-byte aligned; its weights' padding columns see zeros).
"""

import dataclasses
from typing import Optional, Tuple

import torch
from torch import nn

from parity.torch import _ops
from parity.torch.modules import EmbeddingBagCollection


def interaction_output_dim(num_embeddings: int, dim: int) -> int:
    """Columns of the unpadded output: ``D + (T+1)T/2``."""
    return dim + (num_embeddings + 1) * num_embeddings // 2


def _shape(dense: torch.Tensor, embeddings: torch.Tensor):
    features = embeddings.shape[1] if embeddings.dim() == 3 else embeddings.shape[1] // dense.shape[1]
    return dense.shape[0], features, dense.shape[1]


@torch.library.register_fake("parity::dot_interaction")
def _dot_interaction_fake(dense, embeddings, output_stride=0):
    batch, features, dim = _shape(dense, embeddings)
    columns = output_stride if output_stride else interaction_output_dim(features, dim)
    return dense.new_empty((batch, columns))


@torch.library.register_fake("parity::dot_interaction_backward")
def _dot_interaction_backward_fake(dense, embeddings, grad_output):
    return torch.empty_like(dense), embeddings.new_empty(embeddings.shape, dtype=torch.float32)


def _setup_context(ctx, inputs, output):
    dense, embeddings, _ = inputs
    ctx.save_for_backward(dense, embeddings)


def _backward(ctx, grad_output):
    dense, embeddings = ctx.saved_tensors
    grad_dense, grad_embeddings = torch.ops.parity.dot_interaction_backward(dense, embeddings, grad_output.contiguous())
    # The library writes the embeddings' gradient in fp32 (what the TBE backward takes): no cast for
    # fp32 embeddings (the TBE's output fed in directly), rounded for bf16 ones.
    return grad_dense, grad_embeddings.to(embeddings.dtype), None


torch.library.register_autograd("parity::dot_interaction", _backward, setup_context=_setup_context)


def dot_interaction(dense: torch.Tensor, embeddings: torch.Tensor, output_stride: int = 0) -> torch.Tensor:
    """``torch.ops.parity.dot_interaction``: ``cat([dense, bmm(z, z^T)[:, li, lj]], 1)`` for ``z =
    [dense, embeddings]``, in ``dense``'s dtype (float32 or bfloat16; the products accumulate in fp32).

    ``embeddings`` is ``[B, T, D]`` or ``[B, T*D]``, in ``dense``'s dtype or float32 (then rounded to
    ``dense``'s dtype, as ``embeddings.to(dense.dtype)`` would, and its gradient comes back fp32).
    ``output_stride`` (0: unpadded) pads each row with zero columns. Bad shapes or dtypes raise
    ValueError with the library's message."""
    return torch.ops.parity.dot_interaction(dense, embeddings, output_stride)


class DotInteraction(nn.Module):
    """DLRM's pairwise dot interaction (the shared baseline's ``cat([x, bmm(z, z^T)[:, li, lj]], 1)``)
    as one library op forward and one backward.

    Args:
        num_embeddings: T, the pooled embedding vectors per sample (the dense vector makes T+1).
        dim: D, every vector's length.
        pad_to: round the output's columns up to a multiple of this (1: no padding); the padding
            columns are zeros, so a following ``nn.Linear(padded_dim, ...)`` computes what an
            unpadded one would, with rows 16-byte aligned for ``pad_to=8`` in bf16.

    ``forward(dense [B, D], embeddings [B, T, D] or [B, T*D]) -> [B, output_dim]``.
    """

    def __init__(self, num_embeddings: int, dim: int, pad_to: int = 1) -> None:
        super().__init__()
        if num_embeddings < 1 or dim < 1 or pad_to < 1:
            raise ValueError(f"num_embeddings={num_embeddings}, dim={dim}, pad_to={pad_to}: expected >= 1")
        self.num_embeddings, self.dim = num_embeddings, dim
        self.unpadded_dim = interaction_output_dim(num_embeddings, dim)
        self.output_dim = -(-self.unpadded_dim // pad_to) * pad_to

    @property
    def output_stride(self) -> int:
        """The op's ``output_stride``: 0 when unpadded."""
        return self.output_dim if self.output_dim != self.unpadded_dim else 0

    def check_shapes(self, dense: torch.Tensor, embeddings: torch.Tensor) -> None:
        """ValueError unless ``dense`` is ``[B, D]`` and ``embeddings`` ``[B, T, D]`` or ``[B, T*D]``."""
        expected = (dense.shape[0], self.num_embeddings * self.dim)
        if embeddings.dim() == 3:
            expected = (dense.shape[0], self.num_embeddings, self.dim)
        if tuple(dense.shape[1:]) != (self.dim,) or tuple(embeddings.shape) != expected:
            raise ValueError(f"dense {tuple(dense.shape)}, embeddings {tuple(embeddings.shape)}: expected "
                             f"[B, {self.dim}] and {list(expected)} (num_embeddings={self.num_embeddings})")

    def forward(self, dense: torch.Tensor, embeddings: torch.Tensor) -> torch.Tensor:
        self.check_shapes(dense, embeddings)
        return dot_interaction(dense, embeddings, self.output_stride)

    def extra_repr(self) -> str:
        return f"num_embeddings={self.num_embeddings}, dim={self.dim}, output_dim={self.output_dim}"


class _LookupDotInteraction(torch.autograd.Function):
    """The TBE lookup (pooled output in dense's dtype) and the dot interaction as one node; the
    backward passes the interaction's fp32 gradient of the pooled embeddings straight to the TBE's
    fused optimiser backward (as :class:`parity.torch.TbeLookup`, the weights get no ``.grad``)."""

    @staticmethod
    def forward(ctx, placeholder, dense, weights, state1, state2, step, indices, offsets, per_sample_weights,
                config: _ops.TbeConfig, output_stride: int):
        pooled = _ops.tbe_forward(config, weights, indices, offsets, per_sample_weights)
        ctx.config = config
        ctx.save_for_backward(dense, pooled, weights, state1, state2, step, indices, offsets, per_sample_weights)
        return torch.ops.parity.dot_interaction(dense, pooled, output_stride)

    @staticmethod
    def backward(ctx, grad_output):
        dense, pooled, weights, state1, state2, step, indices, offsets, per_sample_weights = ctx.saved_tensors
        grad_dense, grad_pooled = torch.ops.parity.dot_interaction_backward(dense, pooled, grad_output.contiguous())
        _ops.tbe_backward_with_optimizer(ctx.config, weights, state1, state2, step, indices, offsets,
                                         per_sample_weights, grad_pooled)
        return (None, grad_dense) + (None,) * 9


class EmbeddingDotInteraction(nn.Module):
    """An :class:`~parity.torch.EmbeddingBagCollection`'s lookup followed by the dot interaction, in
    one autograd node: ``DotInteraction(T, D, pad_to)(dense, collection(values, offsets))`` with
    the TBE writing the pooled embeddings in ``dense``'s dtype and the interaction's fp32 gradient
    going straight into the TBE's fused optimiser backward (two separate modules at bf16 need a
    cast of ``[B, T*D]`` each way, for the autograd contract that a gradient has its input's dtype).

    Args:
        collection: the tables, every feature of one dim D (its weights, optimiser state and bounds
            check are the ones used; it stays usable on its own).
        pad_to: as :class:`DotInteraction`.

    ``forward(dense [B, D] float32 or bfloat16, values, offsets=None, lengths=None,
    per_sample_weights=None) -> [B, output_dim]``, the batch as :meth:`EmbeddingBagCollection.forward`
    takes it.
    """

    def __init__(self, collection: EmbeddingBagCollection, pad_to: int = 1) -> None:
        super().__init__()
        config = collection._config
        dims = {config.table_dims[t] for t in config.table_of_feature}
        if len(dims) != 1:
            raise ValueError(f"collection: feature dims {sorted(dims)}, expected one dim for every feature")
        self.collection = collection
        self.interaction = DotInteraction(len(config.table_of_feature), dims.pop(), pad_to)
        self.output_dim = self.interaction.output_dim
        self._configs = {dtype: dataclasses.replace(config, output_dtype=dtype)
                         for dtype in (torch.float32, torch.bfloat16)}

    def forward(self, dense: torch.Tensor, values: torch.Tensor, offsets: Optional[torch.Tensor] = None,
                lengths: Optional[torch.Tensor] = None,
                per_sample_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
        if dense.dtype not in self._configs:
            raise ValueError(f"dense: dtype {dense.dtype}, expected torch.float32 or torch.bfloat16")
        if dense.dim() != 2 or dense.shape[1] != self.interaction.dim:
            raise ValueError(f"dense: shape {tuple(dense.shape)}, expected [B, {self.interaction.dim}]")
        config = self._configs[dense.dtype]
        c = self.collection
        values, offsets, per_sample_weights = c.batch_arguments(values, offsets, lengths, per_sample_weights)
        if c.bounds_check != "off":
            _ops.bounds_check(config, values, offsets, c.bounds_check)
        if c.training and torch.is_grad_enabled():
            return _LookupDotInteraction.apply(c._autograd_placeholder, dense, c.weights, c.optimizer_state1,
                                               c.optimizer_state2, c.optimizer_step, values, offsets,
                                               per_sample_weights, config, self.interaction.output_stride)
        return self.interaction(dense, _ops.tbe_forward(config, c.weights, values, offsets, per_sample_weights))


def reference_dot_interaction(dense: torch.Tensor, embeddings: torch.Tensor,
                              pairs: Optional[Tuple[torch.Tensor, torch.Tensor]] = None) -> torch.Tensor:
    """The torch expression the op replaces (the shared DLRM baseline's), for tests and comparisons."""
    batch, features, dim = _shape(dense, embeddings)
    z = torch.cat([dense.unsqueeze(1), embeddings.reshape(batch, features, dim).to(dense.dtype)], 1)
    rows, cols = pairs if pairs is not None else torch.tril_indices(features + 1, features + 1, -1, device=z.device)
    return torch.cat([dense, torch.bmm(z, z.transpose(1, 2))[:, rows, cols]], 1)
