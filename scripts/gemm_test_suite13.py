"""Sources of the thirteenth GEMM test suite (`scripts/gemm_test_suite.py --suite test13`, seed
20261215, bench/shapes/gemm_shapes_test13.csv), kept apart so the generator stays short. The seed is
the first from 20261215 (suite 12's seed plus one) whose 30 random sizes all stay under 0.6 TFLOP:
20261215 itself, largest 0.14 TFLOP (20261217 would have drawn one of 6.8); chosen by size alone,
before anything was timed. The MoE source draws 32 token counts (every expert
of the routed batch and of the decode step) before the random sizes. The fresh suite for the score
of the next model change (suite 12 is spent: run 93), from public model configurations that no
earlier suite (dev, calibration extras, test to test12) uses, plus 30 log-uniform random sizes, ~30%
misaligned overall (22 of 72: 20 source GEMMs, 2 random); 3.0 TFLOP in all (test12: 3.0), no shape
above 0.35 TFLOP, so `gemm measure` covers every shape within ~220 s. Like suites 8 to 12 it carries
narrow source GEMMs, sixteen (an M, N or K of 16-64: a 44- and a 52-sequence decode step, Llama 4
Scout's 16-expert router (forward and data gradient) and a decode step's busiest expert, VGG-16's
3-channel first convolution (K = 27, and M = 27 in its weight gradient) and its fc6 at batch 16
(M = 16, K = 16 in the weight gradient), DenseNet-121's 32-channel growth convolutions (N = 32,
K = 32 in the data gradient; one image: M = 196 and 49), NGCF's 64-wide propagation layer and its
weight gradient), ten of them misaligned, since the misaligned narrow / short-K class is where the
model is weakest:
  - Qwen2.5-1.5B (Qwen/Qwen2.5-1.5B config.json; earlier suites used the 0.5B and 14B
    configurations, other widths): hidden 1536, intermediate 8960 (gate and up fused: 17920),
    12 heads of 128 with 2 KV heads (fused QKV 1536 + 2 * 256 = 2048), vocabulary 151936 (tied
    embeddings); a decode step of 44 sequences (misaligned M).
  - OLMo-1B (allenai/OLMo-1B-hf config.json; dense, not the OLMoE of suite 2): hidden 2048,
    intermediate 8192 (gate and up fused: 16384), 16 heads of 128 (fused QKV 3 * 2048 = 6144),
    vocabulary 50304 (tied embeddings), context 2048; a decode step of 52 sequences (misaligned M).
  - Llama 4 Scout (meta-llama/Llama-4-Scout-17B-16E config.json, text_config): hidden 5120, 16
    routed experts of intermediate 8192 (gate and up fused: 16384), top-1, one shared expert of the
    same width (its up projection kept), router 5120 -> 16, 40 heads / 8 KV heads of 128 (fused QKV
    5120 + 2 * 1024 = 7168, kept), vocabulary 202048. 2048 tokens routed (the first three experts'
    GEMMs kept) and a decode step of 256 sequences (about 16 tokens per expert; the busiest expert's
    up projection kept).
  - VGG-16 (Simonyan & Zisserman 2015, Table 1, configuration D): 3x3 convolutions as GEMMs, conv1_1
    3 -> 64 over 224 x 224 (K = 27: misaligned), conv3_2 256 -> 256 over 56 x 56 (data gradient),
    conv4_2 512 -> 512 over 28 x 28 (weight gradient), and fc6 7 * 7 * 512 = 25088 -> 4096
    (forward and weight gradient), at batch 16 (chosen here; the paper trains at 256).
  - DenseNet-121 (Huang et al. 2017, Table 1; torchvision densenet121): growth rate k = 32,
    bottleneck 1x1 convolutions to 4k = 128 channels, then 3x3 convolutions 128 -> 32 (K = 1152);
    dense blocks of 6 / 12 / 24 / 16 layers over 56 x 56 / 28 x 28 / 14 x 14 / 7 x 7, block 4's last
    layer reading 512 + 15 * 32 = 992 channels. Block 1's 3x3 convolution (forward, data gradient)
    at training batch 64 (chosen here), and one image at inference (block 3's 3x3 convolution over
    196 rows, block 4's last 1x1 over 49: misaligned M).
  - AutoRec (Sedhain et al. WWW 2015): I-AutoRec on ML-1M (6040 users, 3706 items), k = 500 hidden
    units (the most the paper tries); each item's rating vector over the users is one row, all 3706
    at once (full batch, chosen here): the encoder 6040 -> 500 (misaligned M), the decoder
    500 -> 6040 (K = 500: misaligned) and its weight gradient (K = 3706).
  - NGCF (Wang et al. SIGIR 2019, Gowalla; the authors' code
    xiangwang1223/neural_graph_collaborative_filtering): embedding 64, three propagation layers of
    64, 29858 users and 40981 items; a layer's W1 over all 70839 nodes (misaligned M, and K in its
    weight gradient; W2 has the same shape), and the full-ranking scores over the items with the
    four layers' embeddings concatenated (K = 256) for a test batch of 2048 users (the code's test
    batch, twice its training batch of 1024) and the last, partial one (29858 mod 2048 = 1186
    users: misaligned M).
"""

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261215


def llm_shapes_test13(rng):
    qwen_hidden, qwen_ffn, qwen_qkv = 1536, 8960, 1536 + 2 * 2 * 128
    olmo_hidden, olmo_ffn = 2048, 8192
    return [
        ("qwen25_1b5_qkv_fwd_t8192", 8192, qwen_qkv, qwen_hidden, "llm"),
        ("qwen25_1b5_gateup_fwd_t4096", 4096, 2 * qwen_ffn, qwen_hidden, "llm"),
        ("qwen25_1b5_gateup_dgrad_t4096", 4096, qwen_hidden, 2 * qwen_ffn, "llm"),
        ("qwen25_1b5_down_fwd_t4096", 4096, qwen_hidden, qwen_ffn, "llm"),
        ("qwen25_1b5_down_wgrad_t4096", qwen_ffn, qwen_hidden, 4096, "llm"),
        ("qwen25_1b5_lmhead_fwd_t512", 512, 151936, qwen_hidden, "llm"),
        ("qwen25_1b5_qkv_b44", 44, qwen_qkv, qwen_hidden, "llm"),
        ("qwen25_1b5_down_b44", 44, qwen_hidden, qwen_ffn, "llm"),
        ("olmo1b_qkv_dgrad_t4096", 4096, olmo_hidden, 3 * olmo_hidden, "llm"),
        ("olmo1b_gateup_fwd_t2048", 2048, 2 * olmo_ffn, olmo_hidden, "llm"),
        ("olmo1b_down_fwd_t4096", 4096, olmo_hidden, olmo_ffn, "llm"),
        ("olmo1b_lmhead_fwd_t1024", 1024, 50304, olmo_hidden, "llm"),
        ("olmo1b_lmhead_dgrad_t1024", 1024, olmo_hidden, 50304, "llm"),
        ("olmo1b_qkv_b52", 52, 3 * olmo_hidden, olmo_hidden, "llm"),
    ]


def moe_shapes_test13(rng, expert_tokens):
    """One routed batch: every expert's token count drawn around the mean (routing is never
    balanced), the up (gate and up fused) and down projections of the first three kept; then one
    decode step's counts, the busiest expert's up projection kept (it bounds the step)."""
    hidden, ffn, experts, top_k = 5120, 8192, 16, 1
    qkv = 40 * 128 + 2 * 8 * 128
    loads = [expert_tokens(rng, 2048, experts, top_k) for _ in range(experts)]
    rows = []
    for i, t in enumerate(loads[:3]):
        rows.append((f"llama4scout_expert_up_{i}", t, 2 * ffn, hidden, "moe"))
        rows.append((f"llama4scout_expert_down_{i}", t, hidden, ffn, "moe"))
    busiest = max(expert_tokens(rng, 256, experts, top_k) for _ in range(experts))
    rows += [
        ("llama4scout_expert_up_decode_b256", busiest, 2 * ffn, hidden, "moe"),
        ("llama4scout_router_t2048", 2048, experts, hidden, "moe"),
        ("llama4scout_router_dgrad_t2048", 2048, hidden, experts, "moe"),
        ("llama4scout_shared_up_t2048", 2048, 2 * ffn, hidden, "moe"),
        ("llama4scout_qkv_t2048", 2048, qkv, hidden, "moe"),
    ]
    return rows


def vision_speech_shapes_test13(rng, training_triplet):
    batch = 16
    rows = [
        ("vgg16_conv1_1_fwd_b16", batch * 224 * 224, 64, 3 * 9, "vision"),
        ("vgg16_conv1_1_wgrad_b16", 3 * 9, 64, batch * 224 * 224, "vision"),
        ("vgg16_conv3_2_dgrad_b16", batch * 56 * 56, 256 * 9, 256, "vision"),
        ("vgg16_conv4_2_wgrad_b16", 512 * 9, 512, batch * 28 * 28, "vision"),
        ("vgg16_fc6_fwd_b16", batch, 4096, 512 * 7 * 7, "vision"),
        ("vgg16_fc6_wgrad_b16", 512 * 7 * 7, 4096, batch, "vision"),
    ]
    batch = 64
    rows += [
        ("densenet121_b1_conv3x3_fwd_b64", batch * 56 * 56, 32, 4 * 32 * 9, "vision"),
        ("densenet121_b1_conv3x3_dgrad_b64", batch * 56 * 56, 4 * 32 * 9, 32, "vision"),
        ("densenet121_b3_conv3x3_fwd_b1", 14 * 14, 32, 4 * 32 * 9, "vision"),
        ("densenet121_b4_l16_conv1x1_fwd_b1", 7 * 7, 4 * 32, 512 + 15 * 32, "vision"),
    ]
    return rows


def recsys_shapes_test13(rng, training_triplet):
    users, items = 6040, 3706
    hidden = 500
    rows = [
        ("autorec_ml1m_enc_fwd", items, hidden, users, "recsys"),
        ("autorec_ml1m_dec_fwd", items, users, hidden, "recsys"),
        ("autorec_ml1m_dec_wgrad", hidden, users, items, "recsys"),
    ]
    nodes, gowalla_items, dim = 29858 + 40981, 40981, 64
    tail = 29858 % 2048
    rows += [
        ("ngcf_gc_fwd_gowalla", nodes, dim, dim, "recsys"),
        ("ngcf_gc_wgrad_gowalla", dim, dim, nodes, "recsys"),
        ("ngcf_rank_fwd_b2048", 2048, gowalla_items, 4 * dim, "recsys"),
        (f"ngcf_rank_fwd_tail{tail}", tail, gowalla_items, 4 * dim, "recsys"),
    ]
    return rows
