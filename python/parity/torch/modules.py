"""``EmbeddingBag`` (the ``torch.nn.EmbeddingBag`` signature for sum/mean, per-sample weights and
padding_idx) and ``EmbeddingBagCollection`` (many tables, values + offsets per feature), both over
Parity's TBE ops with the optimiser applied in the backward: ``loss.backward()`` updates the
embedding weights and their optimiser state, which are buffers (``state_dict()``,
:meth:`optimizer_state`)."""

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from parity import tbe as _tbe
from parity.torch import _ops

_POOLINGS = ("sum", "mean")
_BOUNDS_CHECK_MODES = ("error", "fix", "off")


# The optimiser fused into the backward: the same fields as the numpy API's.
OptimizerConfig = _tbe.Optimizer


class _TbeModule(nn.Module):
    """Shared by both modules: the layout, the optimiser state buffers, the autograd placeholder
    and the lookup with its bounds check."""

    def _init_tbe(self, tables, table_of_feature, pooling, optimizer: OptimizerConfig, bounds_check: str,
                  device, output_dtype) -> None:
        if pooling not in _POOLINGS:
            raise ValueError(f"mode: {pooling!r} is not supported (sum or mean)")
        if bounds_check not in _BOUNDS_CHECK_MODES:
            raise ValueError(f"bounds_check: {bounds_check!r}, expected one of {', '.join(_BOUNDS_CHECK_MODES)}")
        rows, dims = _ops.layout_lists(tables)
        self._layout = _tbe.Layout(tables, table_of_feature)  # validates, as the ops will
        self.bounds_check = bounds_check
        self._pooling = pooling
        self._config = _ops.TbeConfig(
            rows, dims, tuple(int(t) for t in table_of_feature), pooling, output_dtype, optimizer.kind,
            float(optimizer.learning_rate), float(optimizer.eps), float(optimizer.weight_decay),
            optimizer.weight_decay_mode, float(optimizer.max_norm), float(optimizer.beta1), float(optimizer.beta2),
        )
        first, second = _tbe.Optimizer(optimizer.kind).state_elements(self._layout)
        self.register_buffer("optimizer_state1", torch.zeros(first, dtype=torch.float32, device=device))
        self.register_buffer("optimizer_state2", torch.zeros(second, dtype=torch.float32, device=device))
        self.register_buffer("optimizer_step", torch.zeros(1, dtype=torch.long))
        # Zero elements, requires grad: makes autograd run the backward (the weights do not require grad).
        self._autograd_placeholder = nn.Parameter(torch.zeros(0, device=device))

    def _apply(self, fn, recurse=True):
        # The step counter is read on the host by the op: it stays a CPU tensor when the module
        # moves; the optimiser state stays fp32 whatever dtype the weights are cast to.
        step = self._buffers.pop("optimizer_step")
        try:
            result = super()._apply(fn, recurse)
        finally:
            self._buffers["optimizer_step"] = step
        for name in ("optimizer_state1", "optimizer_state2"):
            if self._buffers[name].dtype != torch.float32:
                self._buffers[name] = self._buffers[name].float()
        return result

    @property
    def optimizer(self) -> OptimizerConfig:
        c = self._config
        return OptimizerConfig(c.optimizer, c.learning_rate, c.eps, c.weight_decay, c.weight_decay_mode,
                               c.max_norm, c.beta1, c.beta2)

    def optimizer_state(self) -> Dict[str, torch.Tensor]:
        """The optimiser state as tensors: ``state1`` (row-wise Adagrad: one per global row;
        Adagrad: one per weight; Adam: m), ``state2`` (Adam: v) and ``step`` (updates so far)."""
        return {"state1": self.optimizer_state1, "state2": self.optimizer_state2, "step": self.optimizer_step}

    def _lookup(self, flat_weights, indices, offsets, per_sample_weights, config) -> torch.Tensor:
        if self.bounds_check != "off":
            _ops.bounds_check(config, indices, offsets, self.bounds_check)
        if self.training and torch.is_grad_enabled():
            return _ops.tbe_lookup(config, self._autograd_placeholder, flat_weights, self.optimizer_state1,
                                   self.optimizer_state2, self.optimizer_step, indices, offsets, per_sample_weights)
        return _ops.tbe_forward(config, flat_weights, indices, offsets, per_sample_weights)


class EmbeddingBag(_TbeModule):
    """A drop-in for ``torch.nn.EmbeddingBag`` in the cases it covers (``mode`` sum or mean,
    ``per_sample_weights`` with sum, ``padding_idx``, ``include_last_offset``), whose backward
    applies ``optimizer`` to the rows the batch touched (no ``weight.grad``; do not give
    ``weight`` to a torch optimiser).

    ``bounds_check``: "error" (default: a bad index raises ValueError naming it; on CUDA this reads
    a two-number report back, one sync per call), "fix" (bad indices become 0, in place) or "off".
    ``weight`` is ``[num_embeddings, embedding_dim]`` float32, float16 or bfloat16 (``dtype``); the
    output has the weight's dtype; ``embedding_dim`` must be a multiple of 4 (at most 2048).
    ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` are not supported (ValueError).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: Optional[float] = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Optional[torch.Tensor] = None, include_last_offset: bool = False,
                 padding_idx: Optional[int] = None, device=None, dtype=None, *,
                 optimizer: OptimizerConfig = OptimizerConfig(), bounds_check: str = "error") -> None:
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise ValueError("max_norm, scale_grad_by_freq and sparse are not supported by parity.torch.EmbeddingBag "
                             "(row-wise max_norm: OptimizerConfig(kind='rowwise_adagrad', max_norm=...))")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"padding_idx: {padding_idx}, expected in [-{num_embeddings}, {num_embeddings})")
            padding_idx = padding_idx % num_embeddings
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.mode, self.padding_idx, self.include_last_offset = mode, padding_idx, include_last_offset
        dtype = dtype if dtype is not None else torch.float32
        if _weight is None:
            weight = torch.randn(num_embeddings, embedding_dim, device=device, dtype=dtype)  # nn.EmbeddingBag's N(0, 1)
            if padding_idx is not None:
                weight[padding_idx] = 0
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"_weight: shape {tuple(_weight.shape)}, expected ({num_embeddings}, {embedding_dim})")
            weight = _weight.detach().clone().contiguous()
        self.weight = nn.Parameter(weight, requires_grad=False)
        tables = [(self.num_embeddings, self.embedding_dim)]
        # Padding entries become per-sample weights of 0 in a sum (mean: 1/count of the others).
        self._init_tbe(tables, [0], "sum" if padding_idx is not None else mode, optimizer, bounds_check,
                       weight.device, weight.dtype)

    def forward(self, input: torch.Tensor, offsets: Optional[torch.Tensor] = None,
                per_sample_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``input`` 2-D ``[B, L]`` (bags of L) with ``offsets=None``, or 1-D with ``offsets``
        (bag starts; ``include_last_offset`` adds the end). Returns ``[B, embedding_dim]``."""
        indices, offsets = self._csr(input, offsets)
        if per_sample_weights is not None:
            if self.mode != "sum":
                raise ValueError(f"per_sample_weights: only supported with mode='sum', got mode={self.mode!r}")
            if per_sample_weights.shape != input.shape:
                raise ValueError(f"per_sample_weights: shape {tuple(per_sample_weights.shape)}, expected the "
                                 f"input's {tuple(input.shape)}")
            per_sample_weights = per_sample_weights.reshape(-1).to(torch.float32).contiguous()
        if self.padding_idx is not None:
            per_sample_weights = self._padding_weights(indices, offsets, per_sample_weights)
        config = self._config if self._config.output_dtype == self.weight.dtype else self._retyped_config()
        return self._lookup(self.weight.view(-1), indices, offsets, per_sample_weights, config)

    def _retyped_config(self):
        c = self._config
        self._config = _ops.TbeConfig(**{**c.__dict__, "output_dtype": self.weight.dtype})
        return self._config

    def _csr(self, input: torch.Tensor, offsets: Optional[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        if input.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"input: dtype {input.dtype}, expected torch.int32 or torch.int64")
        if input.dim() == 2:
            if offsets is not None:
                raise ValueError("offsets: must be None when input is 2-D")
            batch, length = input.shape
            offsets = torch.arange(batch + 1, dtype=input.dtype, device=input.device) * length
            return input.reshape(-1).contiguous(), offsets
        if input.dim() != 1:
            raise ValueError(f"input: {input.dim()}-D, expected 1-D (with offsets) or 2-D")
        if offsets is None or offsets.dim() != 1:
            raise ValueError("offsets: a 1-D tensor is required when input is 1-D")
        offsets = offsets.to(device=input.device, dtype=input.dtype)
        if not self.include_last_offset:
            end = torch.full((1,), input.numel(), dtype=input.dtype, device=input.device)
            offsets = torch.cat([offsets, end])
        return input.contiguous(), offsets.contiguous()

    def _padding_weights(self, indices, offsets, per_sample_weights):
        keep = (indices != self.padding_idx).to(torch.float32)
        if self.mode == "mean":
            # Bag of each position, then 1 / (non-padding entries of the bag): a mean over the others.
            positions = torch.arange(indices.numel(), device=indices.device, dtype=offsets.dtype)
            bag = torch.searchsorted(offsets[1:], positions, right=True)
            kept = torch.zeros(offsets.numel() - 1, device=indices.device).index_add_(0, bag, keep)
            keep = keep / kept.clamp(min=1)[bag]
        return keep if per_sample_weights is None else keep * per_sample_weights

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}, padding_idx={self.padding_idx}, "
                f"optimizer={self._config.optimizer}, bounds_check={self.bounds_check!r}")


@dataclass(frozen=True)
class EmbeddingBagConfig:
    """One table of an :class:`EmbeddingBagCollection` and the features that read it (TorchRec's
    field names)."""

    name: str
    num_embeddings: int
    embedding_dim: int
    feature_names: Tuple[str, ...]


class EmbeddingBagCollection(_TbeModule):
    """Many tables in one packed buffer, looked up in one TBE call (TorchRec's
    ``EmbeddingBagCollection`` shape, one pooling for all tables).

    ``forward(values, offsets)`` takes the batch of every feature at once, feature-major in
    :attr:`feature_names` order (TorchRec's ``KeyedJaggedTensor`` values and offsets: feature f's bag
    b is ``values[offsets[f*B+b]:offsets[f*B+b+1]]``, row ids local to the feature's table; or
    ``lengths`` instead of ``offsets``) and returns ``[B, sum of the features' dims]``, feature f in
    columns :meth:`feature_columns`. :meth:`forward_dict` takes ``{feature: (values, offsets)}``.
    """

    def __init__(self, tables: Sequence[EmbeddingBagConfig], pooling: str = "sum", *, device=None,
                 dtype=None, optimizer: OptimizerConfig = OptimizerConfig(), bounds_check: str = "error",
                 seed: Optional[int] = None) -> None:
        super().__init__()
        if not tables:
            raise ValueError("tables: empty, expected at least one EmbeddingBagConfig")
        self.tables = list(tables)
        self.feature_names: List[str] = []
        table_of_feature: List[int] = []
        for index, table in enumerate(self.tables):
            for feature in table.feature_names:
                if feature in self.feature_names:
                    raise ValueError(f"feature_names: {feature!r} appears twice")
                self.feature_names.append(feature)
                table_of_feature.append(index)
        dtype = dtype if dtype is not None else torch.float32
        shapes = [(t.num_embeddings, t.embedding_dim) for t in self.tables]
        # The packed layout (table starts are where the library puts them).
        layout = _tbe.Layout(shapes, table_of_feature)
        # Initialised where it will live (a multi-GB table is not filled on the host).
        device = torch.device(device) if device is not None else torch.device("cpu")
        generator = torch.Generator(device=device).manual_seed(seed) if seed is not None else None
        packed = torch.zeros(layout.total_weight_elements, device=device)
        for index, (rows, dim) in enumerate(shapes):  # TorchRec's default: uniform(+-sqrt(1/num_embeddings))
            bound = math.sqrt(1.0 / max(rows, 1))
            start = layout.weights_offsets[index]
            packed[start : start + rows * dim].uniform_(-bound, bound, generator=generator)
        self.weights = nn.Parameter(packed.to(dtype=dtype), requires_grad=False)
        self._init_tbe(shapes, table_of_feature, pooling, optimizer, bounds_check, self.weights.device, dtype)
        dims = [self.tables[t].embedding_dim for t in table_of_feature]
        self._columns = [sum(dims[:f]) for f in range(len(dims) + 1)]
        self._weight_starts = self._layout.weights_offsets

    def table_weight(self, name: str) -> torch.Tensor:
        """Table ``name`` as a ``[num_embeddings, embedding_dim]`` view of the packed weights."""
        for index, table in enumerate(self.tables):
            if table.name == name:
                start, stop = self._weight_starts[index], self._weight_starts[index + 1]
                return self.weights[start:stop].view(table.num_embeddings, table.embedding_dim)
        raise KeyError(f"{name!r} is not a table; tables: {', '.join(t.name for t in self.tables)}")

    def feature_columns(self, feature: str) -> slice:
        """The output columns of ``feature``."""
        f = self.feature_names.index(feature)
        return slice(self._columns[f], self._columns[f + 1])

    def forward(self, values: torch.Tensor, offsets: Optional[torch.Tensor] = None,
                lengths: Optional[torch.Tensor] = None,
                per_sample_weights: Optional[torch.Tensor] = None) -> torch.Tensor:
        values, offsets, per_sample_weights = self.batch_arguments(values, offsets, lengths, per_sample_weights)
        return self._lookup(self.weights, values, offsets, per_sample_weights, self._config)

    def batch_arguments(self, values: torch.Tensor, offsets: Optional[torch.Tensor] = None,
                        lengths: Optional[torch.Tensor] = None, per_sample_weights: Optional[torch.Tensor] = None
                        ) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """:meth:`forward`'s arguments as the ops take them: contiguous values, offsets of the values'
        dtype (from ``lengths`` when given instead), fp32 per-sample weights."""
        if (offsets is None) == (lengths is None):
            raise ValueError("give exactly one of offsets and lengths")
        if values.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"values: dtype {values.dtype}, expected torch.int32 or torch.int64")
        if offsets is None:
            zero = torch.zeros(1, dtype=values.dtype, device=values.device)
            offsets = torch.cat([zero, torch.cumsum(lengths, 0).to(values.dtype)])
        offsets = offsets.to(device=values.device, dtype=values.dtype).contiguous()
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.to(torch.float32).contiguous()
        return values.contiguous(), offsets, per_sample_weights

    def forward_dict(self, features: Dict[str, Tuple[torch.Tensor, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        """``{feature: (values, offsets)}`` (offsets of B+1 entries) -> ``{feature: [B, dim]}``."""
        missing = [f for f in self.feature_names if f not in features]
        if missing or len(features) != len(self.feature_names):
            raise ValueError(f"features: expected exactly {self.feature_names}, missing {missing}")
        values, offsets, base = [], [], 0
        for index, name in enumerate(self.feature_names):
            feature_values, feature_offsets = features[name]
            values.append(feature_values)
            shifted = feature_offsets.to(feature_values.dtype) + base
            offsets.append(shifted if index == 0 else shifted[1:])
            base += feature_values.numel()
        pooled = self.forward(torch.cat(values), torch.cat(offsets))
        return {name: pooled[:, self.feature_columns(name)] for name in self.feature_names}
