"""Sources of the twelfth GEMM test suite (`scripts/gemm_test_suite.py --suite test12`, seed
20261214, bench/shapes/gemm_shapes_test12.csv), kept apart so the generator stays short. The seed is
the first from 20261212 whose 30 random sizes all stay under 0.6 TFLOP (20261212 drew one of 1.25,
20261213 one of 10.4): chosen by size alone, before anything was timed. The fresh
suite for the score of the next model change (suites 10 and 11 are spent: run 92), from public model
configurations that no earlier suite (dev, calibration extras, test to test11) uses, plus 30
log-uniform random sizes, ~30% misaligned overall; 3.0 TFLOP in all (test11: 3.5), so `gemm measure`
covers every shape within ~220 s. Like suites 8 to 11 it carries narrow source GEMMs (an M, N or K of 16-64: a
24-sequence decode step, DeepSeek-V2-Lite's 64-expert router (forward and data gradient) and a
decode step's busiest expert, LightGCN's 64-wide scoring, U-Net's first 3x3 convolution over 64
channels and its 64 -> 2 output layer), since the misaligned narrow / short-K class is where the
model is weakest:
  - Llama 3.2 3B (meta-llama/Llama-3.2-3B config.json): hidden 3072, intermediate 8192 (gate and up
    fused: 16384), 24 heads of 128 with 8 KV heads (fused QKV 3072 + 2 * 1024 = 5120), vocabulary
    128256; a decode step of 24 sequences.
  - Gemma 2 2B (google/gemma-2-2b config.json): hidden 2304, intermediate 9216 (gate and up fused:
    18432), 8 heads of 256 with 4 KV heads (fused QKV 2048 + 2 * 1024 = 4096, output 2048 -> 2304),
    vocabulary 256000; a decode step of 36 sequences (misaligned M).
  - DeepSeek-V2-Lite (deepseek-ai/DeepSeek-V2-Lite config.json): hidden 2048, 64 routed experts of
    intermediate 1408 (gate and up fused: 2816), top-6, 2 shared experts (one 2048 -> 2 * 2 * 1408
    GEMM), router 2048 -> 64. 4096 tokens routed (the first three experts' GEMMs kept) and a decode
    step of 256 sequences (about 24 tokens per expert; the busiest expert's up projection kept).
  - ResNet-18 (He et al. 2016, torchvision resnet18): the 3x3 convolutions of stages 1-4 as GEMMs
    (64 channels over 56 x 56, K = 576; 128 over 28 x 28, K = 1152; 256 over 14 x 14; 512 over 7 x 7,
    K = 4608) at batch 32, stage 2's 1x1 downsample, and the 512 -> 1000 classifier at batch 250
    (its weight gradient has K = 250: misaligned).
  - U-Net (Ronneberger et al. 2015): 572 x 572 input, valid 3x3 convolutions; the first block's
    second convolution 64 -> 64 over 568 x 568 (one image), the bottleneck's first 3x3 convolution
    512 -> 1024 over 30 x 30 (K = 4608, 900 rows per image; batch 4), the 1x1 output layer 64 -> 2
    over 388 x 388 (N = 2, misaligned-free M).
  - LightGCN (He et al. SIGIR 2020; the authors' code kuandeng/LightGCN, Gowalla): embedding 64,
    29858 users and 40981 items (not a multiple of 8: misaligned N); full-ranking evaluation of a
    batch of 2048 users (scores 2048 x 40981 with K = 64) and the BPR batch's user-item scores
    (chosen here: 2048 x 2048), and a batch of 1000 users (misaligned M).
  - PLE (Tang et al. RecSys 2020): two tasks, two task-specific and one shared expert of [256, 128]
    over a 512-wide input (chosen here: the paper gives no single width), each expert's first layer a
    training triplet at batch 8192, the gates 512 -> 3 and 512 -> 3 run as one 512 -> 9 GEMM
    (misaligned N, forward only), and a task tower's 128 -> 64 hidden layer.
"""

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261214


def llm_shapes_test12(rng):
    llama_hidden, llama_ffn = 3072, 8192
    gemma_hidden, gemma_ffn = 2304, 9216
    return [
        ("llama32_3b_qkv_fwd_t4096", 4096, 5120, llama_hidden, "llm"),
        ("llama32_3b_gateup_fwd_t2048", 2048, 2 * llama_ffn, llama_hidden, "llm"),
        ("llama32_3b_down_wgrad_t4096", llama_ffn, llama_hidden, 4096, "llm"),
        ("llama32_3b_lmhead_fwd_t512", 512, 128256, llama_hidden, "llm"),
        ("llama32_3b_qkv_b24", 24, 5120, llama_hidden, "llm"),
        ("llama32_3b_o_fwd_t4096", 4096, llama_hidden, llama_hidden, "llm"),
        ("llama32_3b_gateup_dgrad_t2048", 2048, llama_hidden, 2 * llama_ffn, "llm"),
        ("gemma2_2b_qkv_fwd_t8192", 8192, 4096, gemma_hidden, "llm"),
        ("gemma2_2b_o_dgrad_t8192", 8192, 2048, gemma_hidden, "llm"),
        ("gemma2_2b_gateup_fwd_t4096", 4096, 2 * gemma_ffn, gemma_hidden, "llm"),
        ("gemma2_2b_down_fwd_t4096", 4096, gemma_hidden, gemma_ffn, "llm"),
        ("gemma2_2b_down_wgrad_t4096", gemma_ffn, gemma_hidden, 4096, "llm"),
        ("gemma2_2b_lmhead_fwd_t256", 256, 256000, gemma_hidden, "llm"),
        ("gemma2_2b_qkv_b36", 36, 4096, gemma_hidden, "llm"),
    ]


def moe_shapes_test12(rng, expert_tokens):
    """One routed batch: every expert's token count drawn around the mean (routing is never
    balanced), the up (gate and up fused) and down projections of the first three kept; then one
    decode step's counts, the busiest expert's up projection kept (it bounds the step)."""
    hidden, ffn, experts, top_k = 2048, 1408, 64, 6
    loads = [expert_tokens(rng, 4096, experts, top_k) for _ in range(experts)]
    rows = []
    for i, t in enumerate(loads[:3]):
        rows.append((f"dsv2lite_expert_up_{i}", t, 2 * ffn, hidden, "moe"))
        rows.append((f"dsv2lite_expert_down_{i}", t, hidden, ffn, "moe"))
    busiest = max(expert_tokens(rng, 256, experts, top_k) for _ in range(experts))
    rows += [
        ("dsv2lite_expert_up_decode_b256", busiest, 2 * ffn, hidden, "moe"),
        ("dsv2lite_router_t4096", 4096, experts, hidden, "moe"),
        ("dsv2lite_router_dgrad_t4096", 4096, hidden, experts, "moe"),
        ("dsv2lite_shared_up_t4096", 4096, 2 * 2 * ffn, hidden, "moe"),
    ]
    return rows


def vision_speech_shapes_test12(rng, training_triplet):
    batch = 32
    rows = [
        ("resnet18_s1_conv_fwd_b32", batch * 56 * 56, 64, 64 * 9, "vision"),
        ("resnet18_s1_conv_dgrad_b32", batch * 56 * 56, 64 * 9, 64, "vision"),
        ("resnet18_s2_conv_dgrad_b32", batch * 28 * 28, 128 * 9, 128, "vision"),
        ("resnet18_s3_conv_fwd_b32", batch * 14 * 14, 256, 256 * 9, "vision"),
        ("resnet18_s3_conv_wgrad_b32", 256 * 9, 256, batch * 14 * 14, "vision"),
        ("resnet18_s4_conv_fwd_b32", batch * 7 * 7, 512, 512 * 9, "vision"),
        ("resnet18_s4_conv_wgrad_b32", 512 * 9, 512, batch * 7 * 7, "vision"),
        ("resnet18_s2_down_fwd_b32", batch * 28 * 28, 128, 64, "vision"),
        ("resnet18_fc_fwd_b250", 250, 1000, 512, "vision"),
        ("resnet18_fc_wgrad_b250", 512, 1000, 250, "vision"),
        ("unet_block1_conv2_fwd_b1", 568 * 568, 64, 64 * 9, "vision"),
        ("unet_block1_conv2_wgrad_b1", 64 * 9, 64, 568 * 568, "vision"),
        ("unet_bottleneck_conv_fwd_b4", 4 * 30 * 30, 1024, 512 * 9, "vision"),
        ("unet_out_fwd_b1", 388 * 388, 2, 64, "vision"),
    ]
    return rows


def recsys_shapes_test12(rng, training_triplet):
    users_batch, items, dim = 2048, 40981, 64
    rows = [
        ("lightgcn_rank_fwd_b2048", users_batch, items, dim, "recsys"),
        ("lightgcn_bpr_scores_b2048", users_batch, users_batch, dim, "recsys"),
        ("lightgcn_rank_fwd_b1000", 1000, items, dim, "recsys"),
    ]
    rows += training_triplet("ple_expert0_b8192", 8192, 512, 256, "recsys")
    rows += [
        ("ple_expert1_fwd_b8192", 8192, 128, 256, "recsys"),
        ("ple_gates_fwd_b8192", 8192, 9, 512, "recsys"),
        ("ple_tower_hidden_fwd_b8192", 8192, 64, 128, "recsys"),
    ]
    return rows
