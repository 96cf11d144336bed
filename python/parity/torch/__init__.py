"""Parity's TBE in PyTorch.

- ``torch.ops.parity.tbe_forward`` / ``tbe_backward_with_optimizer`` / ``bounds_check``: the ops
  (CPU and CUDA kernels in C++, fake kernels for torch.compile), wrapped in :mod:`parity.torch.ops`;
- :class:`EmbeddingBag`: ``torch.nn.EmbeddingBag``'s signature for sum/mean, per-sample weights and
  padding_idx, with the optimiser applied in the backward;
- :class:`EmbeddingBagCollection`: many tables in one lookup.

Importing this module needs a package built with torch importable (docs/python.md).
"""

from parity.torch import _ops as ops
from parity.torch._ops import TbeConfig, TbeLookup
from parity.torch.modules import EmbeddingBag, EmbeddingBagCollection, EmbeddingBagConfig, OptimizerConfig

__all__ = ["EmbeddingBag", "EmbeddingBagCollection", "EmbeddingBagConfig", "OptimizerConfig", "TbeConfig",
           "TbeLookup", "ops"]
