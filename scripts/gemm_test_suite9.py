"""Sources of the ninth GEMM test suite (`scripts/gemm_test_suite.py --suite test9`, seed 20261209,
bench/shapes/gemm_shapes_test9.csv), kept apart so the generator stays short. The fresh suite for
the next model change's score (the H100 calibration and the GEMM hardware resolved from the
device), from public model configurations that no earlier suite (dev, calibration extras, test to
test8) uses, plus 30 log-uniform random sizes, ~30% misaligned overall; sized like test8 so
`gemm measure` covers every shape within ~220 s (no shape above ~0.3 TFLOP). Like suite 8 it
carries eleven narrow source GEMMs (a K, N or M of 20-64: a 28-token decode step, a router over 32
experts, GhostNet's 20-, 40- and 60-channel ghost convolutions, Caser's 50-wide layer, BERT4Rec's
64-wide hidden state), four of them misaligned. The MoE sources draw five experts' token counts
(two MiniMax, three Aria) before the random sizes, which keeps every random shape small (all under
0.06 TFLOP with this seed; drawing three or four would have put one above 0.7 TFLOP):
  - MobileLLM-125M (facebook/MobileLLM-125M config.json): hidden 576, intermediate 1536, 9 heads /
    3 KV heads of 64 (fused QKV 576 + 2 * 192 = 960), vocabulary 32000 (tied embeddings).
  - ALBERT-xxlarge (albert/albert-xxlarge-v2 config.json): hidden 4096, intermediate 16384 (GELU, not
    gated), 64 heads of 64, factorized embeddings of 128 (the 128 -> 4096 projection, and the MLM
    decoder 128 -> 30000 tokens), sequences of 512.
  - BART-large (facebook/bart-large config.json): d_model 1024, encoder and decoder FFN 4096, 16
    heads, vocabulary 50265 (odd: the LM head's data gradient has a misaligned K).
  - MiniMax-Text-01 (MiniMaxAI/MiniMax-Text-01 config.json): hidden 6144, 32 experts of
    intermediate 9216 (gate and up fused: 18432), top-2; its router is a 6144 -> 32 GEMM.
  - Aria (rhymes-ai/Aria config.json, text_config): hidden 2560, 64 experts of moe_intermediate 1664
    (gate and up fused: 3328), top-6, two shared experts run as one MLP of 2 * 1664 = 3328 (gate
    and up fused: 6656).
  - GhostNet 1.0x (Han et al. 2020, Table 1 and the authors' ghostnet.py): a Ghost module's primary
    1x1 convolution makes half its output channels (ratio 2; the cheap depthwise operation the
    rest). The 28 x 28 bottleneck (40 in, 120 expanded, 40 out) runs 40 -> 60 (ghost 1) and
    120 -> 20 (ghost 2; N = 20, and K = 20 or 60 in the data gradients: misaligned); batch 64
    (rows = batch x positions).
  - DETR (Carion et al. 2020, facebookresearch/detr, ResNet-50 backbone): hidden 256, FFN 2048,
    100 object queries, 91 COCO classes + no-object (class head 256 -> 92, applied to all 6
    decoder layers' outputs for the auxiliary losses; K = 92 in its data gradient: misaligned), the
    2048 -> 256 input projection of the backbone's stride-32 features; a batch of 4 images padded
    to 800 x 1088 (25 x 34 = 850 positions each: 3400 rows).
  - ECAPA-TDNN (Desplanques et al. 2020; speechbrain/spkrec-ecapa-voxceleb hyperparameters): 80 mel
    filterbanks, channels 1024 (first TDNN kernel 5: K = 400; Res2Net scale 8: 128-channel splits
    of kernel 3, K = 384), the multi-layer aggregation 3 * 1024 -> 3072, attentive statistics
    pooling over [x, mean, std] (9216 -> 128 attention channels). 3 s training crops at a 10 ms hop
    (301 frames; batch 32: 9632 rows) and one 8 s test utterance (801 frames: misaligned M).
  - DSSM (Huang et al. 2013): 30621 letter trigrams (Table 1, the 500K-word vocabulary; odd:
    misaligned K, and M in the weight gradient) -> 300 -> 300 -> 128 (K = 300 in the last layer:
    misaligned), mini-batch 1024; the hashed input run as a dense GEMM.
  - Caser (Tang & Wang 2018, the authors' code graytowne/caser_pytorch): d = 50, L = 5, n_v = 4,
    n_h = 16; the fully connected layer over n_v * d + n_h * L = 280 convolution features -> 50
    (K = 50 in its data gradient: misaligned), batch 512.
  - BERT4Rec (Sun et al. 2019, MovieLens-1M setup): hidden 64, FFN 256, sequences of 200, batch
    256, mask proportion 0.2 (40 masked positions per sequence), 3416 items (the output layer's
    data gradient: N = 64).
"""

from gemm_suite_sources import expert_layer_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261209


def llm_shapes_test9(rng):
    albert_tokens = 4 * 512
    return [
        ("mobilellm125m_qkv_t32768", 32768, 576 + 2 * 3 * 64, 576, "llm"),
        ("mobilellm125m_gateup_t32768", 32768, 2 * 1536, 576, "llm"),
        ("mobilellm125m_o_t28", 28, 576, 9 * 64, "llm"),
        ("mobilellm125m_lmhead_fwd_t8192", 8192, 32000, 576, "llm"),
        ("albertxxl_ffn1_fwd_b3", 3 * 512, 16384, 4096, "llm"),
        ("albertxxl_ffn2_wgrad_b4", 16384, 4096, albert_tokens, "llm"),
        ("albertxxl_mlm_decoder_dgrad_b8", 8 * 512, 128, 30000, "llm"),
        ("bartl_enc_ffn1_fwd_t24576", 24576, 4096, 1024, "llm"),
        ("bartl_lmhead_fwd_t2048", 2048, 50265, 1024, "llm"),
        ("bartl_lmhead_dgrad_t2048", 2048, 1024, 50265, "llm"),
    ]


def moe_shapes_test9(rng, expert_tokens):
    """Per expert: the up projection (gate and up fused) and the down projection, for `count`
    experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, up width, down width, experts drawn
        ("minimax01", 16384, 32, 2, 6144, 2 * 9216, 9216, 2),
        ("aria", 16384, 64, 6, 2560, 2 * 1664, 1664, 3),
    ]
    rows = expert_layer_rows(rng, layers, expert_tokens)
    rows += [
        ("minimax01_router_t16384", 16384, 32, 6144, "moe"),
        ("aria_shared_gateup_t8192", 8192, 2 * 2 * 1664, 2560, "moe"),
    ]
    return rows


def vision_speech_shapes_test9(rng, training_triplet):
    batch = 64
    rows = [
        ("ghostnet_s3_g1_pw_fwd_b64", batch * 28 * 28, 120 // 2, 40, "vision"),
        ("ghostnet_s3_g1_pw_dgrad_b64", batch * 28 * 28, 40, 120 // 2, "vision"),
        ("ghostnet_s3_g2_pw_fwd_b64", batch * 28 * 28, 40 // 2, 120, "vision"),
        ("ghostnet_s3_g2_pw_dgrad_b64", batch * 28 * 28, 120, 40 // 2, "vision"),
    ]
    detr_rows, detr_queries = 4 * 25 * 34, 6 * 4 * 100
    rows += [
        ("detr_input_proj_fwd_b4", detr_rows, 256, 2048, "vision"),
        ("detr_class_dgrad_b4", detr_queries, 256, 91 + 1, "vision"),
    ]
    crops, utterance = 32 * 301, 801
    rows += [
        ("ecapa_tdnn1_fwd_b32", crops, 1024, 80 * 5, "speech"),
        ("ecapa_mfa_fwd_b32", crops, 3072, 3 * 1024, "speech"),
        ("ecapa_asp_att_fwd_b32", crops, 128, 3 * 3072, "speech"),
        ("ecapa_mfa_fwd_utt801", utterance, 3072, 3 * 1024, "speech"),
        ("ecapa_res2_fwd_utt801", utterance, 1024 // 8, 3 * 1024 // 8, "speech"),
    ]
    return rows


def recsys_shapes_test9(rng, training_triplet):
    rows = [
        ("dssm_l0_fwd_b1024", 1024, 300, 30621, "recsys"),
        ("dssm_l0_wgrad_b1024", 30621, 300, 1024, "recsys"),
        ("dssm_l2_fwd_b1024", 1024, 128, 300, "recsys"),
        ("dssm_l2_wgrad_b1024", 300, 128, 1024, "recsys"),
    ]
    rows += training_triplet("caser_fc1_b512", 512, 4 * 50 + 16 * 5, 50, "recsys")
    rows += [
        ("bert4rec_ffn1_fwd_b256", 256 * 200, 4 * 64, 64, "recsys"),
        ("bert4rec_out_dgrad_b256", 256 * 40, 64, 3416, "recsys"),
    ]
    return rows
