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


def routed_and_decode_expert_rows(rng, expert_tokens, name, hidden, up, down, experts, top_k,
                                  routed_tokens, decode_batch, kept=3):
    """One routed batch: every expert's token count drawn around the mean (routing is never
    balanced), the up and down projections of the first `kept` experts; then one decode step's
    counts, the busiest expert's up projection (it bounds the step). Draws 2 * experts counts."""
    loads = [expert_tokens(rng, routed_tokens, experts, top_k) for _ in range(experts)]
    rows = []
    for i, t in enumerate(loads[:kept]):
        rows.append((f"{name}_expert_up_{i}", t, up, hidden, "moe"))
        rows.append((f"{name}_expert_down_{i}", t, hidden, down, "moe"))
    busiest = max(expert_tokens(rng, decode_batch, experts, top_k) for _ in range(experts))
    rows.append((f"{name}_expert_up_decode_b{decode_batch}", busiest, up, hidden, "moe"))
    return rows
