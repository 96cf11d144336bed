"""
Parity's C++ library (catalogue, GEMM selector, TBE); use the `parity` package instead.
"""

from collections.abc import Sequence
from typing import Annotated

from numpy.typing import NDArray


class UnsupportedError(NotImplementedError):
    pass

def build_info() -> dict:
    """
    Version, commit, build type, compiled CUDA architectures, and the GPUs this build can see.
    """

def hw_catalogue(data_dir: str | None = None) -> list:
    """
    Every catalogue entry (sorted by vendor, then name) as a dict; data_dir=None resolves the data directory as the library does.
    """

def hw_find(name: str, data_dir: str | None = None) -> dict:
    """
    One catalogue entry by name or alias (ValueError listing the known names otherwise).
    """

def hw_quantity_keys() -> list[str]:
    """The numeric fields of a catalogue entry, in declaration order."""

def gemm_select(m: int, n: int, k: int, hw: str, dtype: str, layout: str, batch: int, epilogue: str, lda: int, ldb: int, ldc: int, alignment_bytes: int, top: int, data_dir: str | None, calibration_file: str) -> dict:
    """
    The analytical selector's ranking for one GEMM on a catalogue GPU, with the model's time breakdown per candidate and the report text (`parity gemm select --explain`).
    """

class TbeLayout:
    """Where every table lives in the packed weights (TbeLayout)."""

    @staticmethod
    def create(table_rows: Sequence[int], table_dims: Sequence[int], table_of_feature: Sequence[int]) -> TbeLayout: ...

    @property
    def num_tables(self) -> int: ...

    @property
    def num_features(self) -> int: ...

    @property
    def table_of_feature(self) -> list[int]: ...

    @property
    def weights_offsets(self) -> list[int]: ...

    @property
    def row_bases(self) -> list[int]: ...

    @property
    def output_column_offsets(self) -> list[int]: ...

    @property
    def total_rows(self) -> int: ...

    @property
    def total_weight_elements(self) -> int: ...

    @property
    def total_output_dim(self) -> int: ...

    @property
    def max_dim(self) -> int: ...

def tbe_forward(layout: TbeLayout, weights: Annotated[NDArray, dict(order='C', device='cpu')], weights_bf16: bool, indices: Annotated[NDArray, dict(order='C', device='cpu')], offsets: Annotated[NDArray, dict(order='C', device='cpu')], per_sample_weights: Annotated[NDArray, dict(order='C', device='cpu')] | None, pooling: str, output: Annotated[NDArray, dict(order='C', device='cpu')], output_bf16: bool) -> None:
    """
    Pooled lookup into `output` (output_rows x output_cols) through the TBE op on the CPU.
    """

def tbe_backward_fused(layout: TbeLayout, weights: Annotated[NDArray, dict(order='C', device='cpu')], weights_bf16: bool, state1: Annotated[NDArray, dict(order='C', device='cpu')], state2: Annotated[NDArray, dict(order='C', device='cpu')], indices: Annotated[NDArray, dict(order='C', device='cpu')], offsets: Annotated[NDArray, dict(order='C', device='cpu')], per_sample_weights: Annotated[NDArray, dict(order='C', device='cpu')] | None, grad_output: Annotated[NDArray, dict(order='C', device='cpu')], pooling: str, optimizer: str, learning_rate: float, eps: float, weight_decay: float, weight_decay_mode: str, max_norm: float, beta1: float, beta2: float, step: int) -> None:
    """
    Backward fused with the optimiser: updates weights and state in place, one update per unique row.
    """

def tbe_bounds_check(layout: TbeLayout, indices: Annotated[NDArray, dict(order='C', device='cpu')], offsets: Annotated[NDArray, dict(order='C', device='cpu')], mode: str) -> dict:
    """
    Checks (fix mode: repairs in place) indices and offsets; error mode raises ValueError naming the first bad entry.
    """

def tbe_state_elements(layout: TbeLayout, optimizer: str) -> tuple[int, int]:
    """Elements of the two fp32 optimiser state buffers."""
