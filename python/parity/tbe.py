"""Table-batched embeddings (TBE) on numpy arrays, through the library's TBE op on the CPU.

Many tables live in one packed weights buffer (see :class:`Layout`); a batch is feature-major CSR:
``indices[N]`` and ``offsets[F*B+1]`` (int32 or int64, one dtype for both); bag ``(f, b)`` is
``indices[offsets[f*B+b]:offsets[f*B+b+1]]``, row ids local to the feature's table. Pooled output
is ``[B, sum_f D_f]`` (feature f in its column block); ``pooling="none"`` gives ``[N, D]``.

bfloat16 arrays travel as uint16 bit patterns (``weight_dtype="bf16"``, ``output_dtype="bf16"``).
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from parity import _core

_DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16}


class Layout:
    """Where every table lives in the packed weights buffer and what each feature reads.

    ``tables``: ``(num_rows, dim)`` per table, dim a multiple of 4 in [4, 2048];
    ``table_of_feature``: the table each feature reads (None: one feature per table, in order).
    Table t occupies ``weights[weights_offsets[t] : weights_offsets[t] + rows*dim]``, row-major.
    """

    def __init__(self, tables: Sequence[Tuple[int, int]], table_of_feature: Optional[Sequence[int]] = None):
        tables = [tuple(t) for t in tables]
        for index, table in enumerate(tables):
            if len(table) != 2:
                raise ValueError(f"tables[{index}]: {table!r}, expected (num_rows, dim)")
        self._tables: List[Tuple[int, int]] = [(int(rows), int(dim)) for rows, dim in tables]
        features = [] if table_of_feature is None else [int(t) for t in table_of_feature]
        self._native = _core.TbeLayout.create(
            [rows for rows, _ in self._tables], [dim for _, dim in self._tables], features
        )

    @property
    def tables(self) -> List[Tuple[int, int]]:
        """``(num_rows, dim)`` per table."""
        return list(self._tables)

    @property
    def table_rows(self) -> List[int]:
        return [rows for rows, _ in self._tables]

    @property
    def table_dims(self) -> List[int]:
        return [dim for _, dim in self._tables]

    @property
    def num_tables(self) -> int:
        return self._native.num_tables

    @property
    def num_features(self) -> int:
        return self._native.num_features

    @property
    def table_of_feature(self) -> List[int]:
        return list(self._native.table_of_feature)

    @property
    def weights_offsets(self) -> List[int]:
        """Element offset of each table's row 0 (T+1 entries, the last is the total)."""
        return list(self._native.weights_offsets)

    @property
    def row_bases(self) -> List[int]:
        """First global row id of each table (T+1 entries): row-wise optimiser state is indexed by it."""
        return list(self._native.row_bases)

    @property
    def output_column_offsets(self) -> List[int]:
        """First output column of each feature (F+1 entries)."""
        return list(self._native.output_column_offsets)

    @property
    def total_rows(self) -> int:
        return self._native.total_rows

    @property
    def total_weight_elements(self) -> int:
        return self._native.total_weight_elements

    @property
    def total_output_dim(self) -> int:
        return self._native.total_output_dim

    @property
    def max_dim(self) -> int:
        return self._native.max_dim

    def table_view(self, weights: np.ndarray, table: int) -> np.ndarray:
        """Table ``table`` of a packed weights buffer as a ``[rows, dim]`` view."""
        rows, dim = self._tables[table]
        start = self.weights_offsets[table]
        return weights[start : start + rows * dim].reshape(rows, dim)

    def __repr__(self) -> str:
        return f"Layout(tables={self._tables}, table_of_feature={self.table_of_feature})"


@dataclass(frozen=True)
class Optimizer:
    """The optimiser fused into the backward (one update per unique row, summed gradient).

    ``kind``: sgd, rowwise_adagrad, adagrad or adam. ``weight_decay_mode`` (rowwise_adagrad only):
    none, l2 (adds wd*w to the gradient) or decoupled (scales the row by 1 - lr*wd); ``max_norm``
    (rowwise_adagrad): rescale an updated row to this L2 norm when above it, 0 = off.
    """

    kind: str = "sgd"
    learning_rate: float = 0.01
    eps: float = 1e-8
    weight_decay: float = 0.0
    weight_decay_mode: str = "none"
    max_norm: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999

    def state_elements(self, layout: Layout) -> Tuple[int, int]:
        """Elements of the two fp32 state buffers: 0 (sgd), one per global row (rowwise_adagrad),
        one per weight (adagrad), m and v shaped like the weights (adam)."""
        return tuple(_core.tbe_state_elements(layout._native, self.kind))

    def init_state(self, layout: Layout) -> Tuple[np.ndarray, np.ndarray]:
        """Zeroed state buffers for ``layout``."""
        first, second = self.state_elements(layout)
        return np.zeros(first, np.float32), np.zeros(second, np.float32)


@dataclass(frozen=True)
class BoundsCheckReport:
    """Outcome of :func:`bounds_check`: exact counts and the first bad entries (-1 when none)."""

    bad_indices: int
    bad_offsets: int
    last_offset_fixed: bool
    first_bad_feature: int
    first_bad_table: int
    first_bad_bag: int
    first_bad_position: int
    first_bad_value: int
    first_bad_offset_position: int
    first_bad_offset_value: int
    description: str

    @property
    def is_clean(self) -> bool:
        return self.bad_indices == 0 and self.bad_offsets == 0


def _weight_dtype_is_bf16(weights: np.ndarray, weight_dtype: Optional[str]) -> bool:
    if weight_dtype is None:
        return False
    if weight_dtype not in _DTYPES:
        raise ValueError(f"weight_dtype: {weight_dtype!r}, expected one of {', '.join(_DTYPES)}")
    expected = np.dtype(_DTYPES[weight_dtype])
    if weights.dtype != expected:
        raise ValueError(f"weights: dtype {weights.dtype}, expected {expected} for weight_dtype={weight_dtype}")
    return weight_dtype == "bf16"


def _batch(indices: np.ndarray, offsets: np.ndarray, per_sample_weights: Optional[np.ndarray]):
    indices = np.ascontiguousarray(indices)
    offsets = np.ascontiguousarray(offsets)
    if per_sample_weights is not None:
        per_sample_weights = np.ascontiguousarray(per_sample_weights)
    return indices, offsets, per_sample_weights


def _require_in_place(array: np.ndarray, name: str) -> None:
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.flags.writeable:
        raise ValueError(f"{name}: expected a writable C-contiguous numpy array (it is updated in place)")


def _check_batch(layout: Layout, indices: np.ndarray, offsets: np.ndarray, check: str) -> None:
    if check not in ("error", "off"):
        raise ValueError(f"check: {check!r}, expected 'error' or 'off'")
    if check == "error":
        _core.tbe_bounds_check(layout._native, indices, offsets, "error")


def output_shape(layout: Layout, batch_size: int, num_indices: int, pooling: str = "sum") -> Tuple[int, int]:
    """``(rows, cols)`` of the output: ``(B, sum_f D_f)`` pooled, ``(N, D)`` for pooling none."""
    if pooling == "none":
        return num_indices, layout.max_dim
    return batch_size, layout.total_output_dim


def forward(
    layout: Layout,
    weights: np.ndarray,
    indices: np.ndarray,
    offsets: np.ndarray,
    *,
    pooling: str = "sum",
    per_sample_weights: Optional[np.ndarray] = None,
    weight_dtype: Optional[str] = None,
    output_dtype: str = "fp32",
    check: str = "error",
) -> np.ndarray:
    """Pooled lookup (sum, mean or none; mean of an empty bag is 0; fp32 accumulation).

    ``weights``: the packed buffer (float32, float16, or uint16 with ``weight_dtype="bf16"``);
    ``per_sample_weights``: float32, one per index, multiplies each row. Returns a new
    ``output_dtype`` array of :func:`output_shape`. Bad input raises ValueError naming it;
    ``check="error"`` (default) runs :func:`bounds_check` first, ``"off"`` trusts the batch.
    """
    weights_bf16 = _weight_dtype_is_bf16(weights, weight_dtype)
    if output_dtype not in _DTYPES:
        raise ValueError(f"output_dtype: {output_dtype!r}, expected one of {', '.join(_DTYPES)}")
    indices, offsets, per_sample_weights = _batch(indices, offsets, per_sample_weights)
    _check_batch(layout, indices, offsets, check)
    batch_size = (offsets.size - 1) // max(layout.num_features, 1)
    output = np.empty(output_shape(layout, max(batch_size, 0), indices.size, pooling), _DTYPES[output_dtype])
    _core.tbe_forward(
        layout._native, np.ascontiguousarray(weights), weights_bf16, indices, offsets, per_sample_weights,
        pooling, output, output_dtype == "bf16",
    )
    return output


def backward_fused(
    layout: Layout,
    weights: np.ndarray,
    state: Tuple[np.ndarray, np.ndarray],
    indices: np.ndarray,
    offsets: np.ndarray,
    grad_output: np.ndarray,
    *,
    optimizer: Optimizer = Optimizer(),
    pooling: str = "sum",
    per_sample_weights: Optional[np.ndarray] = None,
    weight_dtype: Optional[str] = None,
    step: int = 1,
    check: str = "error",
) -> None:
    """Backward fused with the optimiser: ``weights`` and ``state`` (from
    :meth:`Optimizer.init_state`) are updated in place, one update per unique row with the summed
    gradient. ``grad_output``: float32, shaped like the forward's output; ``step`` (>= 1) is Adam's
    bias-correction step; ``check`` as in :func:`forward`."""
    weights_bf16 = _weight_dtype_is_bf16(weights, weight_dtype)
    _require_in_place(weights, "weights")
    state1, state2 = state
    _require_in_place(state1, "state[0]")
    _require_in_place(state2, "state[1]")
    indices, offsets, per_sample_weights = _batch(indices, offsets, per_sample_weights)
    _check_batch(layout, indices, offsets, check)
    o = optimizer
    _core.tbe_backward_fused(
        layout._native, weights, weights_bf16, state1, state2, indices, offsets, per_sample_weights,
        np.ascontiguousarray(grad_output), pooling, o.kind, o.learning_rate, o.eps, o.weight_decay,
        o.weight_decay_mode, o.max_norm, o.beta1, o.beta2, step,
    )


def bounds_check(layout: Layout, indices: np.ndarray, offsets: np.ndarray, mode: str = "error") -> BoundsCheckReport:
    """Checks every index against its table's rows and the offsets for monotonicity and range.

    ``mode="error"`` changes nothing and raises ValueError naming table, bag, position and value of
    the first bad entry; ``"fix"`` repairs in place (bad index -> 0, offsets clamped and made
    monotone, last = N) and reports the counts; ``"off"`` does nothing.
    """
    if mode == "fix":
        _require_in_place(indices, "indices")
        _require_in_place(offsets, "offsets")
    else:
        indices, offsets, _ = _batch(indices, offsets, None)
    return BoundsCheckReport(**_core.tbe_bounds_check(layout._native, indices, offsets, mode))


__all__ = ["BoundsCheckReport", "Layout", "Optimizer", "backward_fused", "bounds_check", "forward", "output_shape"]
