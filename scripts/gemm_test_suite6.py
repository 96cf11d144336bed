"""Sources of the sixth GEMM test suite (`scripts/gemm_test_suite.py --suite test6`, seed 20261206,
bench/shapes/gemm_shapes_test6.csv), kept apart so the generator stays short. For the model change
after run 85 (kernels without TMA: each wave's exposed output store), from public model
configurations that no earlier suite (dev, calibration extras, test to test5) uses, plus 30
log-uniform random sizes, ~30% misaligned overall; sized like test5 so `gemm measure` covers every
shape within ~240 s (few shapes above ~1 TFLOP):
  - StarCoder2-3B (bigcode/starcoder2-3b config.json, also the transformers Starcoder2Config
    defaults): hidden 3072, GELU MLP 12288, 24 heads / 2 KV heads of 128 (fused QKV 3072 + 2 * 256
    = 3584), vocabulary 49152.
  - MiniCPM-2B (openbmb/MiniCPM-2B-sft-bf16 config.json): hidden 2304, intermediate 5760, 36 heads
    of 64 (fused QKV 3 * 2304 = 6912), vocabulary 122753 (odd: the LM head's data gradient has a
    misaligned K).
  - Persimmon-8B (adept/persimmon-8b-base config.json, also the transformers PersimmonConfig
    defaults): hidden 4096, squared-ReLU MLP 16384, 64 heads of 64 (fused QKV 3 * 4096),
    vocabulary 262144.
  - NLLB-200 3.3B (facebook/nllb-200-3.3B config.json): d_model 2048, FFN 8192, 16 heads of 128,
    vocabulary 256206 (not a multiple of 8: misaligned K in the LM head's data gradient).
  - gpt-oss-20b (openai/gpt-oss-20b config.json): hidden 2880, expert intermediate 2880 (gate and
    up fused: 5760), 32 experts, top-4, 64 heads / 8 KV heads of 64 (fused QKV 4096 + 2 * 512 =
    5120, output projection 4096 -> 2880).
  - NLLB-MoE 54B (facebook/nllb-moe-54b; NllbMoeConfig): the NLLB-200 3.3B widths (2048, FFN 8192)
    with 128 experts, top-2, in every fourth layer.
  - EfficientNet-B0 (Tan & Le 2019, Table 1): MBConv6 pointwise convolutions (expand 6x, project
    back) of the stages with 24 / 40 / 112 / 192 channels, past each stage's stride (56 x 56 /
    28 x 28 / 14 x 14 / 7 x 7 positions), and the 320 -> 1280 head, at batch 64 (rows = batch x
    positions).
  - Conformer-L (Gulati et al. 2020): encoder dim 512, FFN 2048 (expansion 4), convolution module's
    pointwise 512 -> 2 * 512 (GLU); 40 ms frames after 4x subsampling (15.48 s: 387 frames;
    batch 20: 7740 rows, misaligned M, and K in the weight gradient).
  - AutoInt (Song et al. 2019): Criteo's 39 fields, embeddings d = 16, interacting layers of 2 heads
    of d' = 32 (query, key, value and residual projections fused: 4 x 64 wide), batch 4096
    (rows = batch x fields).
  - xDeepFM (Lian et al. 2018): CIN over 39 fields x 10-dim embeddings with 200 feature maps per
    layer, as a GEMM over rows = batch x 10: layer 1 K = 39 * 39 = 1521 (odd: misaligned), layer 2
    K = 200 * 39 = 7800; batch 4096.
  - BST (Chen et al. 2019, "Behavior Sequence Transformer"): 20 behaviours + the target item (21
    tokens), one block of 8 heads, MLP 1024-512-256; the embedding width 64 is chosen here (the
    paper varies it), so the MLP input is 21 * 64 = 1344; batch 2048.
"""

from gemm_suite_sources import expert_layer_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261206


def llm_shapes_test6(rng):
    return [
        ("starcoder2_3b_qkv_t8192", 8192, 3072 + 2 * 2 * 128, 3072, "llm"),
        ("starcoder2_3b_fc_t4096", 4096, 12288, 3072, "llm"),
        ("starcoder2_3b_proj_wgrad_t4096", 12288, 3072, 4096, "llm"),
        ("starcoder2_3b_lmhead_fwd_t1024", 1024, 49152, 3072, "llm"),
        ("minicpm2b_qkv_t4096", 4096, 3 * 2304, 2304, "llm"),
        ("minicpm2b_gateup_t2048", 2048, 2 * 5760, 2304, "llm"),
        ("minicpm2b_down_t48", 48, 2304, 5760, "llm"),
        ("minicpm2b_lmhead_dgrad_t1024", 1024, 2304, 122753, "llm"),
        ("persimmon8b_qkv_t2048", 2048, 3 * 4096, 4096, "llm"),
        ("persimmon8b_down_t3072", 3072, 4096, 16384, "llm"),
        ("persimmon8b_lmhead_fwd_t256", 256, 262144, 4096, "llm"),
        ("nllb3b_self_qkv_t8192", 8192, 3 * 2048, 2048, "llm"),
        ("nllb3b_lmhead_dgrad_t512", 512, 2048, 256206, "llm"),
    ]


def moe_shapes_test6(rng, expert_tokens):
    """Per expert: the up projection (gate and up fused where gated) and the down projection, for
    `count` experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, up width, down width, experts drawn
        ("gptoss20b", 16384, 32, 4, 2880, 2 * 2880, 2880, 2),
        ("nllbmoe", 32768, 128, 2, 2048, 8192, 8192, 2),
    ]
    rows = expert_layer_rows(rng, layers, expert_tokens)
    rows += [
        ("gptoss20b_qkv_t4096", 4096, 64 * 64 + 2 * 8 * 64, 2880, "moe"),
        ("gptoss20b_o_t4096", 4096, 2880, 64 * 64, "moe"),
    ]
    return rows


def vision_speech_shapes_test6(rng, training_triplet):
    rows = [
        ("effb0_s3_expand_fwd_b64", 64 * 56 * 56, 6 * 24, 24, "vision"),
        ("effb0_s4_project_fwd_b64", 64 * 28 * 28, 40, 6 * 40, "vision"),
        ("effb0_s6_expand_wgrad_b64", 112, 6 * 112, 64 * 14 * 14, "vision"),
        ("effb0_s7_project_fwd_b64", 64 * 7 * 7, 192, 6 * 192, "vision"),
        ("effb0_head_fwd_b64", 64 * 7 * 7, 1280, 320, "vision"),
    ]
    rows += training_triplet("conformerl_ffn1_b20", 20 * 387, 512, 2048, "speech")
    rows.append(("conformerl_conv_pw1_fwd_b20", 20 * 387, 2 * 512, 512, "speech"))
    return rows


def recsys_shapes_test6(rng, training_triplet):
    autoint_rows = 4096 * 39
    cin_rows = 4096 * 10
    rows = [
        ("autoint_l1_qkvr_fwd_b4096", autoint_rows, 4 * 64, 16, "recsys"),
        ("autoint_l2_qkvr_wgrad_b4096", 64, 4 * 64, autoint_rows, "recsys"),
    ]
    rows += training_triplet("xdeepfm_cin1_b4096", cin_rows, 39 * 39, 200, "recsys")
    rows.append(("xdeepfm_cin2_fwd_b4096", cin_rows, 200, 200 * 39, "recsys"))
    rows += [
        ("bst_qkv_fwd_b2048", 2048 * 21, 3 * 64, 64, "recsys"),
        ("bst_mlp_l0_fwd_b2048", 2048, 1024, 21 * 64, "recsys"),
        ("bst_mlp_l0_wgrad_b2048", 21 * 64, 1024, 2048, "recsys"),
    ]
    return rows
