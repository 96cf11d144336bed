"""A plain numpy fp64 reference for TBE (loops over bags, no shared code with the library)."""

import numpy as np


def random_batch(rng, layout, batch_size, max_bag, index_dtype=np.int64):
    """Feature-major CSR: bag lengths uniform in [0, max_bag], indices uniform in each feature's table."""
    lengths = rng.integers(0, max_bag + 1, size=layout.num_features * batch_size)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(index_dtype)
    indices = np.empty(int(offsets[-1]), index_dtype)
    for f in range(layout.num_features):
        rows = layout.tables[layout.table_of_feature[f]][0]
        start, stop = offsets[f * batch_size], offsets[(f + 1) * batch_size]
        indices[start:stop] = rng.integers(0, rows, size=stop - start)
    return indices, offsets


def bags(layout, offsets, batch_size):
    """(feature, b, start, stop) for every bag."""
    for f in range(layout.num_features):
        for b in range(batch_size):
            bag = f * batch_size + b
            yield f, b, int(offsets[bag]), int(offsets[bag + 1])


def forward(layout, weights, indices, offsets, pooling="sum", per_sample_weights=None):
    """fp64 output and the fp64 sum of |terms| per output element (for the error bound)."""
    batch_size = (len(offsets) - 1) // layout.num_features
    w = weights.astype(np.float64)
    out = np.zeros((batch_size, layout.total_output_dim))
    magnitude = np.zeros_like(out)
    for f, b, start, stop in bags(layout, offsets, batch_size):
        table = layout.table_of_feature[f]
        table_w = layout.table_view(w, table)
        column = layout.output_column_offsets[f]
        dim = layout.tables[table][1]
        scale = 1.0 / (stop - start) if pooling == "mean" and stop > start else 1.0
        for position in range(start, stop):
            psw = 1.0 if per_sample_weights is None else float(per_sample_weights[position])
            term = table_w[int(indices[position])] * psw * scale
            out[b, column : column + dim] += term
            magnitude[b, column : column + dim] += np.abs(term)
    return out, magnitude


def row_gradients(layout, indices, offsets, grad_output, pooling="sum", per_sample_weights=None):
    """{(table, row): fp64 summed gradient} and the count of contributions per row."""
    batch_size = (len(offsets) - 1) // layout.num_features
    grads, counts = {}, {}
    for f, b, start, stop in bags(layout, offsets, batch_size):
        table = layout.table_of_feature[f]
        dim = layout.tables[table][1]
        column = layout.output_column_offsets[f]
        scale = 1.0 / (stop - start) if pooling == "mean" and stop > start else 1.0
        for position in range(start, stop):
            psw = 1.0 if per_sample_weights is None else float(per_sample_weights[position])
            key = (table, int(indices[position]))
            g = grad_output[b, column : column + dim].astype(np.float64) * psw * scale
            grads[key] = grads.get(key, 0.0) + g
            counts[key] = counts.get(key, 0) + 1
    return grads, counts
