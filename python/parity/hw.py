"""The hardware catalogue: every GPU the models know, each number with its provenance.

>>> import parity
>>> spec = parity.hw.get("mi350x")
>>> spec.hbm_capacity_gb, spec.provenance("hbm_capacity_gb").kind
(288.0, 'vendor_spec')
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from parity import _core
from parity._data import data_dir as _data_dir


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from: ``kind`` is vendor_spec, measured_third_party, measured_here or
    derived; ``source`` a URL, document or derivation; ``date`` YYYY-MM(-DD); ``note`` a caveat."""

    kind: str
    source: str
    date: str
    note: str


@dataclass(frozen=True)
class Quantity:
    """One catalogue number with its unit, human label and provenance."""

    value: float
    unit: str
    label: str
    provenance: Provenance


@dataclass(frozen=True)
class MatrixInstruction:
    """One matrix-instruction shape (m x n x k on ``dtype`` inputs)."""

    m: int
    n: int
    k: int
    dtype: str
    instruction: str
    provenance: Provenance


@dataclass(frozen=True)
class HardwareSpec:
    """A catalogue entry. Every numeric field is an attribute holding its value (units in the
    name); :meth:`quantity` and :meth:`provenance` give the unit and the source."""

    name: str
    aliases: Tuple[str, ...]
    display_name: str
    vendor: str
    architecture: str
    scale_up_topology: str
    dense_bf16_tflops: float
    dense_fp16_tflops: float
    dense_fp8_tflops: float
    dense_fp32_tflops: float
    hbm_capacity_gb: float
    hbm_bandwidth_tbps: float
    l2_cache_mib: float
    last_level_cache_mib: float
    sm_count: float
    chiplet_count: float
    boost_clock_mhz: float
    peak_rate_clock_mhz: float
    warp_size: float
    shared_memory_per_sm_kib: float
    scale_up_link_gbps: float
    scale_up_per_gpu_gbps: float
    scale_up_link_count: float
    scale_up_domain_gpus: float
    scale_out_nic_gbps: float
    tdp_watts: float
    matrix_instructions: Tuple[MatrixInstruction, ...] = field(repr=False)
    quantities: Dict[str, Quantity] = field(repr=False, compare=False)
    json: str = field(repr=False, compare=False)

    def quantity(self, key: str) -> Quantity:
        """The numeric field ``key`` with unit, label and provenance (KeyError lists the keys)."""
        try:
            return self.quantities[key]
        except KeyError:
            raise KeyError(f"{key!r} is not a catalogue quantity; known: {', '.join(self.quantities)}") from None

    def provenance(self, key: str) -> Provenance:
        """Where the numeric field ``key`` comes from."""
        return self.quantity(key).provenance


def _provenance(raw: dict) -> Provenance:
    return Provenance(raw["kind"], raw["source"], raw["date"], raw["note"])


def _spec(raw: dict) -> HardwareSpec:
    quantities = {
        key: Quantity(q["value"], q["unit"], q["label"], _provenance(q["provenance"]))
        for key, q in raw["quantities"].items()
    }
    instructions = tuple(
        MatrixInstruction(i["m"], i["n"], i["k"], i["dtype"], i["instruction"], _provenance(i["provenance"]))
        for i in raw["matrix_instructions"]
    )
    values = {key: q.value for key, q in quantities.items()}
    return HardwareSpec(
        name=raw["name"],
        aliases=tuple(raw["aliases"]),
        display_name=raw["display_name"],
        vendor=raw["vendor"],
        architecture=raw["architecture"],
        scale_up_topology=raw["scale_up_topology"],
        matrix_instructions=instructions,
        quantities=quantities,
        json=raw["json"],
        **values,
    )


def get(name: str, data_dir: Optional[str] = None) -> HardwareSpec:
    """The catalogue entry ``name`` (a name or alias, any case, '-' or ' ' for '_'): ``get("MI350X")``.
    ValueError names the known entries when there is none."""
    return _spec(_core.hw_find(name, _data_dir(data_dir)))


def catalogue(data_dir: Optional[str] = None) -> List[HardwareSpec]:
    """Every catalogue entry, sorted by vendor then name."""
    return [_spec(raw) for raw in _core.hw_catalogue(_data_dir(data_dir))]


def names(data_dir: Optional[str] = None) -> List[str]:
    """The catalogue's names (not the aliases), sorted by vendor then name."""
    return [spec.name for spec in catalogue(data_dir)]


def quantity_keys() -> List[str]:
    """The numeric fields of an entry, in the library's order."""
    return list(_core.hw_quantity_keys())


__all__ = ["HardwareSpec", "MatrixInstruction", "Provenance", "Quantity", "catalogue", "get", "names", "quantity_keys"]
