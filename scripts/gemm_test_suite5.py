"""Sources of the fifth GEMM test suite (`scripts/gemm_test_suite.py --suite test5`, seed 20261205,
bench/shapes/gemm_shapes_test5.csv), kept apart so the generator stays short. For the model change
after run 55 (kernels without TMA: exposed latency per K-iteration as a time), from public model
configurations that no earlier suite (dev, calibration extras, test to test4) uses, plus 30
log-uniform random sizes, ~30% misaligned overall; sized like test4 so `gemm measure` covers every shape within ~240 s (few shapes above ~1 TFLOP):
  - Mistral-7B-v0.1 (mistralai/Mistral-7B-v0.1 config.json): hidden 4096, intermediate 14336,
    32 heads / 8 KV heads of 128 (fused QKV 4096 + 2 * 1024 = 6144), vocabulary 32000.
  - Phi-2 (microsoft/phi-2 config.json): hidden 2560, intermediate 10240, 32 heads of 80 (fused
    QKV 3 * 2560), vocabulary 51200.
  - Baichuan2-13B (baichuan-inc/Baichuan2-13B-Base config.json): hidden 5120, intermediate 13696,
    40 heads of 128 (fused W_pack 3 * 5120), vocabulary 125696.
  - ChatGLM3-6B (THUDM/chatglm3-6b config.json): hidden 4096, ffn 13696 (gated: 27392), two
    multi-query groups of 128 (QKV 4096 + 2 * 256 = 4608), padded vocabulary 65024.
  - MPT-7B (mosaicml/mpt-7b config.json): d_model 4096, expansion ratio 4 (16384).
  - Jamba-v0.1 (ai21labs/Jamba-v0.1 config.json): hidden 4096, intermediate 14336, 16 experts,
    top-2.
  - JetMoE-8B (jetmoe/jetmoe-8b config.json): hidden 2048, FFN 5632, 8 experts, top-2.
  - DeiT-S/16 (Touvron et al. 2021): width 384, MLP 1536, 197 tokens (batch 96: 18912 tokens).
  - ConvNeXt-T (Liu et al. 2022): pointwise MLPs (ratio 4) of widths 96 / 384 / 768 over 56 x 56 /
    14 x 14 / 7 x 7 positions.
  - HuBERT-base (facebook/hubert-base-ls960 config.json): hidden 768, intermediate 3072, 49.9
    frames per second (10 s: 499 frames; batch 24: 11976, misaligned M).
  - Two-tower retrieval (Yi et al. 2019, sampling-bias-corrected): towers 1024 -> 512 -> 128 at
    batch 8192 and the in-batch logits 8192 x 8192 x 128.
  - MaskNet (Wang et al. 2021, serial): 39 fields x 16 = 624-wide input, mask blocks of 512 with
    reduction ratio 2 (aggregation 624 -> 1248 -> 624), batch 16384.
  - FinalMLP (Mao et al. 2023): two streams of 400-400-400 and 800-800 over 39 x 16 = 624 inputs,
    batch 10000 (misaligned-free widths, an odd batch).
"""

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261205


def llm_shapes_test5(rng):
    return [
        ("mistral7b_qkv_t4096", 4096, 4096 + 2 * 8 * 128, 4096, "llm"),
        ("mistral7b_gateup_t2048", 2048, 2 * 14336, 4096, "llm"),
        ("mistral7b_down_wgrad_t4096", 14336, 4096, 4096, "llm"),
        ("mistral7b_lmhead_fwd_t2048", 2048, 32000, 4096, "llm"),
        ("phi2_qkv_t4096", 4096, 3 * 2560, 2560, "llm"),
        ("phi2_fc1_t4096", 4096, 10240, 2560, "llm"),
        ("phi2_fc2_t4096", 4096, 2560, 10240, "llm"),
        ("phi2_lmhead_dgrad_t2048", 2048, 2560, 51200, "llm"),
        ("baichuan2_13b_wpack_t2048", 2048, 3 * 5120, 5120, "llm"),
        ("baichuan2_13b_down_t1024", 1024, 5120, 13696, "llm"),
        ("baichuan2_13b_gateup_wgrad_t2048", 5120, 2 * 13696, 2048, "llm"),
        ("chatglm3_qkv_t8192", 8192, 4096 + 2 * 256, 4096, "llm"),
        ("chatglm3_gateup_t1024", 1024, 2 * 13696, 4096, "llm"),
        ("chatglm3_lmhead_fwd_t512", 512, 65024, 4096, "llm"),
        ("mpt7b_up_t4096", 4096, 16384, 4096, "llm"),
        ("mpt7b_down_t256", 256, 4096, 16384, "llm"),
    ]


def moe_shapes_test5(rng, expert_tokens):
    """Per expert: the gated up projection (gate and up fused) and the down projection, for
    `count` experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, expert intermediate, experts drawn
        ("jamba", 8192, 16, 2, 4096, 14336, 2),
        ("jetmoe", 16384, 8, 2, 2048, 5632, 2),
    ]
    rows = []
    for name, total, experts, top_k, hidden, intermediate, count in layers:
        for i in range(count):
            t = expert_tokens(rng, total, experts, top_k)
            rows.append((f"{name}_expert_gateup_{i}", t, 2 * intermediate, hidden, "moe"))
            rows.append((f"{name}_expert_down_{i}", t, hidden, intermediate, "moe"))
    return rows


def vision_speech_shapes_test5(rng, training_triplet):
    rows = []
    rows += training_triplet("deits_mlp1_b96", 96 * 197, 384, 1536, "vision")
    rows += [
        ("convnextt_s1_pw1_fwd_b32", 32 * 56 * 56, 4 * 96, 96, "vision"),
        ("convnextt_s3_pw2_fwd_b64", 64 * 14 * 14, 384, 4 * 384, "vision"),
        ("convnextt_s4_pw1_wgrad_b64", 768, 4 * 768, 64 * 7 * 7, "vision"),
    ]
    rows += training_triplet("hubertb_ffn1_b24", 24 * 499, 768, 3072, "speech")
    return rows


def recsys_shapes_test5(rng, training_triplet):
    rows = []
    rows += training_triplet("twotower_l1_b8192", 8192, 1024, 512, "recsys")
    rows += [
        ("twotower_l2_fwd_b8192", 8192, 128, 512, "recsys"),
        ("twotower_inbatch_logits_b8192", 8192, 8192, 128, "recsys"),
    ]
    rows += training_triplet("masknet_agg_b16384", 16384, 624, 1248, "recsys")
    rows += training_triplet("finalmlp_s1_l0_b10000", 10000, 624, 400, "recsys")
    rows += [("finalmlp_s2_l1_fwd_b10000", 10000, 800, 800, "recsys")]
    return rows
