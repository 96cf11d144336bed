"""Sources of the eighth GEMM test suite (`scripts/gemm_test_suite.py --suite test8`, seed
20261208, bench/shapes/gemm_shapes_test8.csv), kept apart so the generator stays short. The fresh
suite for the H200 score of the next model change (the legacy latency as a time), from public model
configurations that no earlier suite (dev, calibration extras, test to test7) uses, plus 30
log-uniform random sizes, ~30% misaligned overall; sized like test7 so `gemm measure` covers every
shape within ~240 s (few shapes above ~0.5 TFLOP). Suite 7 found the model weakest on misaligned
short-K and narrow problems (K or N of 10-80), so the recsys, vision and speech sources below carry
a dozen such GEMMs, nine of them misaligned (field interactions, small GRU gates, a 29-symbol
output, 58-channel pointwise convolutions):
  - Qwen2.5-0.5B (Qwen/Qwen2.5-0.5B config.json): hidden 896, intermediate 4864, 14 heads / 2 KV
    heads of 64 (fused QKV 896 + 2 * 128 = 1152), vocabulary 151936 (tied embeddings).
  - TinyLlama-1.1B (TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json): hidden 2048, intermediate
    5632, 32 heads / 4 KV heads of 64 (fused QKV 2048 + 2 * 256 = 2560), vocabulary 32000.
  - DistilBERT (distilbert/distilbert-base-uncased config.json): dim 768, hidden_dim 3072 (GELU, not
    gated), 12 heads, sequences of 512, vocabulary 30522 (not a multiple of 8: the MLM head's data
    gradient has a misaligned K).
  - Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B config.json): hidden 2048, 128 experts of moe_intermediate
    768 (gate and up fused: 1536), top-8, 32 heads / 4 KV heads of 128 (fused QKV 4096 + 2 * 512 =
    5120).
  - ERNIE-4.5-21B-A3B (baidu/ERNIE-4.5-21B-A3B-PT config.json): hidden 2560, 64 experts of
    moe_intermediate 1536 (gate and up fused: 3072), top-6, two shared experts run as one MLP of
    2 * 1536 = 3072 (gate and up fused: 6144), 20 heads / 4 KV heads of 128.
  - ShuffleNetV2 1.0x (Ma et al. 2018, Table 5; torchvision's stage widths 24 / 116 / 232 / 464 /
    1024): each unit's branch carries half the stage's channels, so stage 2 runs 58 -> 58 pointwise
    convolutions over 28 x 28 (K = N = 58: misaligned) and stage 3 116 -> 116 over 14 x 14; the
    first unit of stage 2 projects the 24-channel stem to 58 over 56 x 56 before its stride-2
    depthwise convolution; conv5 464 -> 1024 over 7 x 7; batch 128 (rows = batch x positions).
  - RNN-T (the MLPerf inference reference, mlcommons/inference speech_recognition/rnnt): 80 mel
    features spliced by 3 (240 inputs per 30 ms frame), encoder LSTMs of 1024 (2 before and 3 after
    stacking time by 2: input 2048; the input projections to the four gates over every step),
    prediction LSTMs of 320, joint 320 + 1024 = 1344 -> 512 -> 29 (28 characters and the blank).
    A batch of 4 utterances of 10 s (334 spliced frames, 167 after stacking) with 150-character
    transcripts (U + 1 = 151): the joint runs over 4 x 167 x 151 = 100868 rows (misaligned M; K = 29
    in its output layer's data gradient, N = 29 in the forward and weight gradient).
  - NARM (Li et al. 2017, the authors' reference implementation lijingsdu/sessionRec_NARM): item
    embeddings of 50, a GRU of 100 hidden units, batch 512, 37484 items (the code's n_items for
    RSC15). The GRU's input projections to its three gates (50 -> 300, K = 50: misaligned) over a
    batch padded to 12 steps (chosen here: 6144 rows); the bilinear decoder B (50 x 200) applied to
    every item embedding (37484 x 50 -> 200: misaligned M and K), and the scores of the 512
    sessions' 200-wide representations over all 37484 items (K = 37484 in their data gradient).
  - PNN (IPNN; Qu et al. 2016, the authors' demo code Atomu2014/product-nets): iPinYou's 16 fields
    x 10-dim embeddings concatenated with their 120 pairwise inner products (280 inputs), a hidden
    layer of 100 (tanh; K = 100 in its data gradient: misaligned), batch 1024.
  - AFM (Xiao et al. 2017, the authors' code hexiangnan/attentional_factorization_machine):
    embeddings of K = 256 and an attention factor t = 8 (the README's optimal ml-tag run, batch
    4096), applied here to Frappe's 10 fields: the attention network's 256 -> 8 layer over every
    pairwise interaction (45 pairs: 4096 x 45 = 184320 rows; N = 8, and K = 8 in its data
    gradient).
"""

from gemm_suite_sources import expert_layer_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.35
DEFAULT_SEED = 20261208


def llm_shapes_test8(rng):
    return [
        ("qwen25_05b_qkv_t16384", 16384, 896 + 2 * 2 * 64, 896, "llm"),
        ("qwen25_05b_gateup_t16384", 16384, 2 * 4864, 896, "llm"),
        ("qwen25_05b_down_wgrad_t16384", 4864, 896, 16384, "llm"),
        ("qwen25_05b_o_t20", 20, 896, 14 * 64, "llm"),
        ("qwen25_05b_lmhead_fwd_t2048", 2048, 151936, 896, "llm"),
        ("tinyllama_qkv_t16384", 16384, 2048 + 2 * 4 * 64, 2048, "llm"),
        ("tinyllama_gateup_t12", 12, 2 * 5632, 2048, "llm"),
        ("tinyllama_down_t12288", 12288, 2048, 5632, "llm"),
        ("tinyllama_lmhead_dgrad_t4096", 4096, 2048, 32000, "llm"),
        ("distilbert_ffn1_b64_fwd", 64 * 512, 3072, 768, "llm"),
        ("distilbert_ffn1_b64_dgrad", 64 * 512, 768, 3072, "llm"),
        ("distilbert_ffn1_b64_wgrad", 768, 3072, 64 * 512, "llm"),
        ("distilbert_vocab_dgrad_b16", 16 * 512, 768, 30522, "llm"),
    ]


def moe_shapes_test8(rng, expert_tokens):
    """Per expert: the up projection (gate and up fused) and the down projection, for `count`
    experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, up width, down width, experts drawn
        ("qwen3moe", 16384, 128, 8, 2048, 2 * 768, 768, 2),
        ("ernie45", 16384, 64, 6, 2560, 2 * 1536, 1536, 1),
    ]
    rows = expert_layer_rows(rng, layers, expert_tokens)
    rows += [
        ("qwen3moe_qkv_t16384", 16384, 32 * 128 + 2 * 4 * 128, 2048, "moe"),
        ("ernie45_shared_gateup_t12288", 12288, 2 * 2 * 1536, 2560, "moe"),
    ]
    return rows


def vision_speech_shapes_test8(rng, training_triplet):
    batch = 128
    rows = [
        ("sfnv2_s2_pw_fwd_b128", batch * 28 * 28, 58, 58, "vision"),
        ("sfnv2_s2_pw_wgrad_b128", 58, 58, batch * 28 * 28, "vision"),
        ("sfnv2_s2_unit1_pw_fwd_b128", batch * 56 * 56, 58, 24, "vision"),
        ("sfnv2_s3_pw_fwd_b128", batch * 14 * 14, 116, 116, "vision"),
        ("sfnv2_conv5_fwd_b128", batch * 7 * 7, 1024, 464, "vision"),
    ]
    utterances, spliced, stacked, labels = 4, 334, 167, 151
    joint = utterances * stacked * labels
    rows += [
        ("rnnt_enc_pre_in_fwd_b4", utterances * spliced, 4 * 1024, 80 * 3, "speech"),
        ("rnnt_enc_post_in_fwd_b4", utterances * stacked, 4 * 1024, 2 * 1024, "speech"),
        ("rnnt_joint1_fwd_b4", joint, 512, 320 + 1024, "speech"),
        ("rnnt_joint2_fwd_b4", joint, 29, 512, "speech"),
        ("rnnt_joint2_dgrad_b4", joint, 512, 29, "speech"),
        ("rnnt_joint2_wgrad_b4", 512, 29, joint, "speech"),
    ]
    return rows


def recsys_shapes_test8(rng, training_triplet):
    sessions, steps, items = 512, 12, 37484
    rows = [
        ("narm_gru_in_fwd_b512", sessions * steps, 3 * 100, 50, "recsys"),
        ("narm_gru_in_wgrad_b512", 50, 3 * 100, sessions * steps, "recsys"),
        ("narm_item_bilinear_fwd", items, 2 * 100, 50, "recsys"),
        ("narm_item_bilinear_wgrad", 50, 2 * 100, items, "recsys"),
        ("narm_scores_dgrad_b512", sessions, 2 * 100, items, "recsys"),
    ]
    rows += training_triplet("pnn_l0_b1024", 1024, 16 * 10 + 16 * 15 // 2, 100, "recsys")
    afm_rows = 4096 * (10 * 9 // 2)
    rows += [
        ("afm_att_fwd_b4096", afm_rows, 8, 256, "recsys"),
        ("afm_att_dgrad_b4096", afm_rows, 256, 8, "recsys"),
    ]
    return rows
