"""Sources of the seventh GEMM test suite (`scripts/gemm_test_suite.py --suite test7`, seed
20261207, bench/shapes/gemm_shapes_test7.csv), kept apart so the generator stays short. The fresh
suite for the H200 score of the current model (the change after run 85 to the kernels without TMA),
from public model configurations that no earlier suite (dev, calibration extras, test to test6)
uses, plus 30 log-uniform random sizes, ~30% misaligned overall; sized like test6 so `gemm measure`
covers every shape within ~240 s (no shape above ~1 TFLOP):
  - SmolLM-360M (HuggingFaceTB/SmolLM-360M config.json): hidden 960, intermediate 2560, 15 heads /
    5 KV heads of 64 (fused QKV 960 + 2 * 320 = 1600), vocabulary 49152 (tied embeddings).
  - BTLM-3B-8K (cerebras/btlm-3b-8k-base config.json): n_embd 2560, 32 heads of 80 (fused QKV
    3 * 2560), SwiGLU n_inner 6826 (gate and up fused: 13652; the down projection's K = 6826 is
    not a multiple of 8: misaligned), vocabulary 50257 (odd: misaligned K in the LM head's data
    gradient).
  - Mamba-2.8B (state-spaces/mamba-2.8b config.json): d_model 2560, expand 2 (d_inner 5120, in_proj
    2560 -> 2 * 5120), dt_rank ceil(2560 / 16) = 160, d_state 16 (x_proj 5120 -> 160 + 2 * 16 =
    192, dt_proj 160 -> 5120).
  - Minitron-4B (nvidia/Minitron-4B-Base config.json): hidden 3072, squared-ReLU MLP 9216 (not
    gated), 24 heads / 8 KV heads of 128 (fused QKV 3072 + 2 * 1024 = 5120), vocabulary 256000.
  - Switch-Base-8 (google/switch-base-8 config.json): d_model 768, expert d_ff 3072 (ReLU, not
    gated), 8 experts, top-1, over a batch of 32 sequences of 512 tokens.
  - GLM-4.5-Air (zai-org/GLM-4.5-Air config.json): hidden 4096, 128 routed experts of
    moe_intermediate 1408 (gate and up fused: 2816), top-8, 96 heads / 8 KV heads of 128 (fused
    QKV 12288 + 2 * 1024 = 14336, output projection 12288 -> 4096).
  - MobileNetV2 (Sandler et al. 2018, Table 2): inverted-residual pointwise convolutions (expand 6x,
    project back) of the stages with 32 / 96 channels, past each stage's stride (28 x 28 / 14 x 14
    positions), and the 320 -> 1280 head over 7 x 7, at batch 128 (rows = batch x positions).
  - ResNet-50 (He et al. 2016, Table 1): bottleneck 1x1 convolutions (conv2_x 256 -> 64 over
    56 x 56, conv4_x 256 -> 1024 over 14 x 14, conv5_x 2048 -> 512 over 7 x 7) and the 2048 -> 1000
    classifier, at batch 64.
  - QuartzNet-15x5 (Kriman et al. 2019, Table 1): the kernel-1 convolutions C3 (512 -> 1024) and
    C4 (1024 -> 29: 28 characters and the CTC blank; K = 29 in its data gradient), over 20 ms frames
    after C1's stride 2 (14.62 s: 731 frames; batch 18: 13158 rows, misaligned M, and K in the
    weight gradient).
  - FiBiNET (Huang et al. 2019, Criteo setup): 39 fields x 10-dim embeddings; SENET squeeze and
    excitation 39 -> 13 -> 39 (reduction ratio 3), the field-all bilinear interaction (rows = batch
    x fields, 10 x 10), and the DNN's first layer (400 units) over both bilinear outputs:
    2 * (39 * 38 / 2) * 10 = 14820 inputs (not a multiple of 8: misaligned); batch 8192.
  - DIEN (Zhou et al. 2019, the authors' reference implementation): embeddings of 18 per id, item
    and category concatenated (36), GRU hidden 36 over 100 behaviours (the interest extractor's
    input projections to its three gates, 36 -> 3 x 36, batched over rows = batch x steps as a
    cuDNN-style GRU runs them; K = 36: misaligned), MLP 200-80 over the 162-wide concatenation
    (user 18 + four 36-wide terms: misaligned K); batch 1024 for the GRU, 4096 for the MLP.
"""

from gemm_suite_sources import expert_layer_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261207


def llm_shapes_test7(rng):
    return [
        ("smollm360m_qkv_t16384", 16384, 960 + 2 * 5 * 64, 960, "llm"),
        ("smollm360m_lmhead_fwd_t4096", 4096, 49152, 960, "llm"),
        ("btlm3b_qkv_t8192", 8192, 3 * 2560, 2560, "llm"),
        ("btlm3b_down_t4096", 4096, 2560, 6826, "llm"),
        ("btlm3b_down_wgrad_t4096", 6826, 2560, 4096, "llm"),
        ("btlm3b_lmhead_dgrad_t1024", 1024, 2560, 50257, "llm"),
        ("mamba28b_in_proj_t8192", 8192, 2 * 5120, 2560, "llm"),
        ("mamba28b_x_proj_t8192", 8192, 160 + 2 * 16, 5120, "llm"),
        ("mamba28b_dt_proj_wgrad_t8192", 160, 5120, 8192, "llm"),
        ("minitron4b_qkv_t4096", 4096, 3072 + 2 * 8 * 128, 3072, "llm"),
        ("minitron4b_up_t24", 24, 9216, 3072, "llm"),
        ("minitron4b_down_t2048", 2048, 3072, 9216, "llm"),
        ("minitron4b_lmhead_fwd_t256", 256, 256000, 3072, "llm"),
    ]


def moe_shapes_test7(rng, expert_tokens):
    """Per expert: the up projection (gate and up fused where gated) and the down projection, for
    `count` experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, up width, down width, experts drawn
        ("switchb8", 32 * 512, 8, 1, 768, 3072, 3072, 2),
        ("glm45air", 16384, 128, 8, 4096, 2 * 1408, 1408, 1),
    ]
    rows = expert_layer_rows(rng, layers, expert_tokens)
    rows += [
        ("glm45air_qkv_t2048", 2048, 96 * 128 + 2 * 8 * 128, 4096, "moe"),
        ("glm45air_o_t2048", 2048, 4096, 96 * 128, "moe"),
    ]
    return rows


def vision_speech_shapes_test7(rng, training_triplet):
    rows = [
        ("mbv2_s3_expand_fwd_b128", 128 * 28 * 28, 6 * 32, 32, "vision"),
        ("mbv2_s5_project_fwd_b128", 128 * 14 * 14, 96, 6 * 96, "vision"),
        ("mbv2_s5_project_wgrad_b128", 6 * 96, 96, 128 * 14 * 14, "vision"),
        ("mbv2_head_fwd_b128", 128 * 7 * 7, 1280, 320, "vision"),
        ("rn50_c2_reduce_fwd_b64", 64 * 56 * 56, 64, 256, "vision"),
        ("rn50_c4_expand_fwd_b64", 64 * 14 * 14, 1024, 256, "vision"),
        ("rn50_c5_reduce_wgrad_b64", 2048, 512, 64 * 7 * 7, "vision"),
        ("rn50_fc_dgrad_b64", 64, 2048, 1000, "vision"),
    ]
    frames = 18 * 731
    rows += [
        ("qn15x5_c3_fwd_b18", frames, 1024, 512, "speech"),
        ("qn15x5_c3_wgrad_b18", 512, 1024, frames, "speech"),
        ("qn15x5_c4_dgrad_b18", frames, 1024, 29, "speech"),
    ]
    return rows


def recsys_shapes_test7(rng, training_triplet):
    fibinet_batch = 8192
    rows = [
        ("fibinet_senet_squeeze_fwd_b8192", fibinet_batch, 13, 39, "recsys"),
        ("fibinet_bilinear_fwd_b8192", fibinet_batch * 39, 10, 10, "recsys"),
    ]
    rows += training_triplet("fibinet_dnn_l0_b8192", fibinet_batch, 2 * (39 * 38 // 2) * 10, 400,
                             "recsys")
    rows.append(("dien_gru1_gates_fwd_b1024", 1024 * 100, 3 * 36, 36, "recsys"))
    rows += [
        ("dien_mlp_l0_fwd_b4096", 4096, 200, 18 + 4 * 36, "recsys"),
        ("dien_mlp_l1_fwd_b4096", 4096, 80, 200, "recsys"),
    ]
    return rows
