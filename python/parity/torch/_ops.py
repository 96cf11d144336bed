"""Loads the torch op library (``parity/_torch_ops.so``: ``torch.ops.parity.*``, schemas and CPU/CUDA
kernels in C++) and registers what torch.compile and autograd need from Python: the fake (meta)
kernels and :class:`TbeLookup`, the autograd function whose backward applies the optimiser (FBGEMM's
"optimizer in backward": the weights get no ``.grad``)."""

import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_torch_ops.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(
        "parity was built without its torch ops (torch did not import at build time); rebuild in an "
        "environment that has torch: pip install --no-build-isolation .  (docs/python.md)"
    )
torch.ops.load_library(_LIBRARY)


def _output_shape(indices, offsets, table_dims, table_of_feature, pooling) -> Tuple[int, int]:
    if pooling == "none":
        return indices.numel(), max(table_dims)
    return (offsets.numel() - 1) // len(table_of_feature), sum(table_dims[t] for t in table_of_feature)


@torch.library.register_fake("parity::tbe_forward")
def _tbe_forward_fake(weights, indices, offsets, per_sample_weights, table_rows, table_dims, table_of_feature,
                      pooling, output_dtype):
    rows, cols = _output_shape(indices, offsets, table_dims, table_of_feature, pooling)
    return weights.new_empty((rows, cols), dtype=output_dtype)


@torch.library.register_fake("parity::tbe_backward_with_optimizer")
def _tbe_backward_fake(weights, state1, state2, indices, offsets, per_sample_weights, grad_output, table_rows,
                       table_dims, table_of_feature, pooling, optimizer, learning_rate, eps, weight_decay,
                       weight_decay_mode, max_norm, beta1, beta2, step):
    return None


@torch.library.register_fake("parity::bounds_check")
def _bounds_check_fake(indices, offsets, table_rows, table_dims, table_of_feature, check_mode):
    return torch.empty(2, dtype=torch.long, device="cpu")


@dataclass(frozen=True)
class TbeConfig:
    """What stays fixed between calls: the layout, the pooling, the output dtype, the optimiser."""

    table_rows: Tuple[int, ...]
    table_dims: Tuple[int, ...]
    table_of_feature: Tuple[int, ...]
    pooling: str
    output_dtype: torch.dtype
    optimizer: str
    learning_rate: float
    eps: float
    weight_decay: float
    weight_decay_mode: str
    max_norm: float
    beta1: float
    beta2: float


def tbe_forward(config: TbeConfig, weights, indices, offsets, per_sample_weights=None) -> torch.Tensor:
    """``torch.ops.parity.tbe_forward`` with the config's layout (no autograd)."""
    return torch.ops.parity.tbe_forward(
        weights, indices, offsets, per_sample_weights, list(config.table_rows), list(config.table_dims),
        list(config.table_of_feature), config.pooling, config.output_dtype,
    )


def tbe_backward_with_optimizer(config: TbeConfig, weights, state1, state2, step, indices, offsets,
                                per_sample_weights, grad_output) -> None:
    """``torch.ops.parity.tbe_backward_with_optimizer`` with the config's layout and optimiser:
    updates ``weights``, ``state1``, ``state2`` and ``step`` in place."""
    torch.ops.parity.tbe_backward_with_optimizer(
        weights, state1, state2, indices, offsets, per_sample_weights, grad_output, list(config.table_rows),
        list(config.table_dims), list(config.table_of_feature), config.pooling, config.optimizer,
        config.learning_rate, config.eps, config.weight_decay, config.weight_decay_mode, config.max_norm,
        config.beta1, config.beta2, step,
    )


def bounds_check(config: TbeConfig, indices, offsets, mode: str = "error") -> torch.Tensor:
    """``torch.ops.parity.bounds_check``: ``[bad_indices, bad_offsets]`` (CPU int64); error mode
    raises ValueError naming the first bad entry, fix mode repairs in place."""
    return torch.ops.parity.bounds_check(
        indices, offsets, list(config.table_rows), list(config.table_dims), list(config.table_of_feature), mode
    )


class TbeLookup(torch.autograd.Function):
    """Pooled lookup whose backward runs the fused optimiser on ``weights`` in place.

    ``placeholder`` is a zero-element tensor that requires grad, so autograd calls the backward
    although the weights themselves do not require grad (they receive no ``.grad``). The
    per-sample weights get no gradient."""

    @staticmethod
    def forward(ctx, placeholder, weights, state1, state2, step, indices, offsets, per_sample_weights,
                config: TbeConfig):
        ctx.config = config
        ctx.save_for_backward(weights, state1, state2, step, indices, offsets, per_sample_weights)
        return tbe_forward(config, weights, indices, offsets, per_sample_weights)

    @staticmethod
    def backward(ctx, grad_output):
        weights, state1, state2, step, indices, offsets, per_sample_weights = ctx.saved_tensors
        grad = grad_output.to(torch.float32).contiguous()
        tbe_backward_with_optimizer(ctx.config, weights, state1, state2, step, indices, offsets,
                                    per_sample_weights, grad)
        return (None,) * 9


def tbe_lookup(config: TbeConfig, placeholder, weights, state1, state2, step, indices, offsets,
               per_sample_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
    """:class:`TbeLookup` applied (what the modules call)."""
    return TbeLookup.apply(placeholder, weights, state1, state2, step, indices, offsets, per_sample_weights, config)


def layout_lists(tables: List[Tuple[int, int]]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    return tuple(int(rows) for rows, _ in tables), tuple(int(dim) for _, dim in tables)
