"""The analytical GEMM selector: for a GEMM and a catalogue GPU, the kernel configuration the model
predicts fastest, with the ranking and the model's time breakdown (no GPU needed, microseconds).

>>> sel = parity.gemm.select(4096, 4096, 4096, hw="h200", dtype="bf16")
>>> sel.choice.short_name, round(sel.choice.predicted_us, 1)
>>> print(sel.explanation)
"""

from dataclasses import dataclass
from typing import Optional, Tuple

from parity import _core
from parity._data import data_dir as _data_dir


@dataclass(frozen=True)
class TimeBreakdown:
    """The model's terms of one prediction (microseconds; ``waves`` is the tile-wave count)."""

    total_us: float
    compute_us: float
    memory_us: float
    l2_us: float
    launch_wave_us: float
    reduction_us: float
    epilogue_us: float
    waves: float


@dataclass(frozen=True)
class RankedCandidate:
    """One configuration in the ranking: its short name, full description and prediction."""

    short_name: str
    config: str
    predicted_us: float
    predicted_tflops: float
    breakdown: TimeBreakdown


@dataclass(frozen=True)
class Selection:
    """The selector's answer. ``top[0]`` is the choice; ``explanation`` is the text of
    ``parity gemm select --explain``; ``basis`` says whether the figures are a Hopper model or a
    modelled AMD device (never a measurement)."""

    hw: str
    problem: str
    basis: str
    calibration: str
    candidates: int
    top: Tuple[RankedCandidate, ...]
    explanation: str
    json: str

    @property
    def choice(self) -> RankedCandidate:
        """The chosen configuration (the first of ``top``)."""
        return self.top[0]

    @property
    def predicted_us(self) -> float:
        """The choice's predicted time in microseconds."""
        return self.top[0].predicted_us

    def __str__(self) -> str:
        return self.explanation


def select(
    m: int,
    n: int,
    k: int,
    hw: str = "h200",
    dtype: str = "bf16",
    *,
    layout: str = "TN",
    batch: int = 1,
    epilogue: str = "none",
    lda: int = 0,
    ldb: int = 0,
    ldc: int = 0,
    alignment_bytes: int = 0,
    top: int = 5,
    data_dir: Optional[str] = None,
    calibration_file: str = "",
) -> Selection:
    """Selects a GEMM configuration for ``D = A·B`` (M x N output, K reduction, cuBLAS column-major
    terms) on the catalogue GPU ``hw``.

    ``dtype``: bf16, fp16 or fp32 (TF32); ``layout``: TN, NN, NT or TT; leading dimensions 0 mean
    packed; ``alignment_bytes`` 0 derives it from the leading dimensions; ``top`` how many ranked
    candidates to return; ``calibration_file`` empty uses ``<data>/calibration/<hw>_gemm.json``
    when present, else the model's defaults. Bad input raises ValueError naming the parameter.
    """
    raw = _core.gemm_select(
        m, n, k, hw, dtype, layout, batch, epilogue, lda, ldb, ldc, alignment_bytes, top, _data_dir(data_dir),
        calibration_file,
    )
    ranked = tuple(
        RankedCandidate(
            row["short_name"], row["config"], row["predicted_us"], row["predicted_tflops"],
            TimeBreakdown(**row["breakdown"]),
        )
        for row in raw["top"]
    )
    return Selection(
        hw=raw["hw"], problem=raw["problem"], basis=raw["basis"], calibration=raw["calibration"],
        candidates=raw["candidates"], top=ranked, explanation=raw["explanation"], json=raw["json"],
    )


__all__ = ["RankedCandidate", "Selection", "TimeBreakdown", "select"]
