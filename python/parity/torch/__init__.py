"""Parity's TBE in PyTorch.

- ``torch.ops.parity.tbe_forward`` / ``tbe_backward_with_optimizer`` / ``bounds_check``: the ops
  (CPU and CUDA kernels in C++, fake kernels for torch.compile), wrapped in :mod:`parity.torch.ops`;
- :class:`EmbeddingBag`: ``torch.nn.EmbeddingBag``'s signature for sum/mean, per-sample weights and
  padding_idx, with the optimiser applied in the backward;
- :class:`EmbeddingBagCollection`: many tables in one lookup;
- ``torch.ops.parity.dot_interaction`` and :class:`DotInteraction`: DLRM's pairwise dot interaction
  (forward and backward by the library's kernels); :class:`EmbeddingDotInteraction`: a collection's
  lookup and the interaction in one autograd node (no cast pass between them).

Importing this module needs a package built with torch importable (docs/python.md).
"""

from parity.torch import _ops as ops
from parity.torch._ops import TbeConfig, TbeLookup
from parity.torch.interaction import (DotInteraction, EmbeddingDotInteraction, dot_interaction,
                                     interaction_output_dim)
from parity.torch.modules import EmbeddingBag, EmbeddingBagCollection, EmbeddingBagConfig, OptimizerConfig

__all__ = ["DotInteraction", "EmbeddingBag", "EmbeddingBagCollection", "EmbeddingBagConfig", "EmbeddingDotInteraction",
           "OptimizerConfig", "TbeConfig", "TbeLookup", "dot_interaction", "interaction_output_dim", "ops"]
