"""Helpers shared by the GEMM test suites' source modules (scripts/gemm_test_suite<N>.py)."""


def expert_layer_rows(rng, layers, expert_tokens):
    """Up and down GEMMs of `count` experts per MoE layer, each with a routed token count drawn by
    expert_tokens(rng, total, experts, top_k); layers are (name, tokens routed, experts, top-k,
    hidden, up width, down width, experts drawn)."""
    rows = []
    for name, total, experts, top_k, hidden, up, down, count in layers:
        for i in range(count):
            t = expert_tokens(rng, total, experts, top_k)
            rows.append((f"{name}_expert_up_{i}", t, up, hidden, "moe"))
            rows.append((f"{name}_expert_down_{i}", t, hidden, down, "moe"))
    return rows
