"""Parity from Python: the hardware catalogue, the analytical GEMM selector and table-batched
embeddings (TBE), over the same C++ library as the ``parity`` CLI.

- :mod:`parity.hw` — ``parity.hw.get("mi350x")``, ``parity.hw.names()``
- :mod:`parity.gemm` — ``parity.gemm.select(4096, 4096, 4096, hw="h200")``
- :mod:`parity.tbe` — TBE forward / backward fused with the optimiser / bounds check on numpy arrays
- :mod:`parity.torch` — torch ops (``torch.ops.parity.*``) and ``EmbeddingBag`` /
  ``EmbeddingBagCollection`` modules (needs the package built with torch importable)

Library errors arrive as exceptions carrying the library's message: ``ValueError`` for bad input,
:class:`UnsupportedError` (a ``NotImplementedError``) for what this build or device cannot run,
``RuntimeError`` otherwise.
"""

from parity import _core
from parity._core import UnsupportedError
from parity import gemm, hw, tbe

__version__: str = _core.build_info()["version"]


def build_info() -> dict:
    """Version, commit, build type, compiled CUDA architectures, whether the build has CUDA, and how
    many GPUs it sees."""
    return dict(_core.build_info())


__all__ = ["UnsupportedError", "build_info", "gemm", "hw", "tbe", "__version__"]
