"""Sources of the eleventh GEMM test suite (`scripts/gemm_test_suite.py --suite test11`, seed
20261211, bench/shapes/gemm_shapes_test11.csv), kept apart so the generator stays short. The fresh
suite for the score of the model change after suite 10, from public model configurations that no
earlier suite (dev, calibration extras, test to test10) uses, plus 30 log-uniform random sizes, ~30%
misaligned overall; sized like test10 so `gemm measure` covers every shape within ~220 s (no shape
above ~0.6 TFLOP). Like suites 8 to 10 it carries narrow source GEMMs, thirteen (an M, N or K of
16-64: a 36-sequence decode step, Hunyuan-Large's 16-expert router (forward and data gradient) and
its busiest expert in a decode step (M = 43), YOLOv3's 64 -> 32 reduction (forward and data
gradient) and 32 -> 64 3x3 convolution, Conv-TasNet's 16-sample encoder (training batch, its weight
gradient, one mixture) and decoder (one mixture), NFM's 64-wide hidden layer and its weight
gradient), four of them misaligned, since the misaligned narrow / short-K class is where the model
is weakest. The MoE source draws 32 token counts (every expert of the routed batch and of the decode
step) before the random sizes, which keeps every random shape at or below 0.56 TFLOP with this seed
(drawing only the four counts it keeps would have put one at 1.07 TFLOP; no draw count below 26
keeps them all under 0.6):
  - OpenLLaMA 3B (openlm-research/open_llama_3b config.json): hidden 3200, intermediate 8640
    (gate and up fused: 17280), 32 heads of 100 (fused QKV 3 * 3200 = 9600), 26 layers,
    vocabulary 32000, untied LM head; a decode step of 36 sequences (M = 36: misaligned).
  - XLM-RoBERTa base (FacebookAI/xlm-roberta-base config.json): hidden 768, intermediate 3072 (GELU,
    not gated), 12 heads (query, key and value run as one 768 -> 2304 GEMM), 514 positions,
    vocabulary 250002 (not a multiple of 8: the MLM head's data gradient has a misaligned K);
    training on 48 sequences of 256 tokens (chosen here).
  - Hunyuan-Large (tencent/Tencent-Hunyuan-Large, Hunyuan-A52B config.json): hidden 6400, 16
    specialized experts of intermediate 18304 (gate and up fused: 36608), top-1, one shared expert
    of the same width, 80 heads / 8 KV heads; its router is a 6400 -> 16 GEMM. 4096 tokens routed
    (the first three experts' GEMMs kept), and a decode step of 512 sequences (about 32 tokens per
    expert; the busiest expert's up projection kept).
  - YOLOv3 (Redmon & Farhadi 2018; pjreddie/darknet cfg/yolov3.cfg): Darknet-53 at the cfg's 608 x
    608 input, batch 64 in subdivisions of 16 (4 images per pass); the first residual block's
    1x1 64 -> 32 and 3x3 32 -> 64 (K = 288) convolutions over 304 x 304, and the detection
    layers' 1x1 convolutions to 3 * (80 + 5) = 255 channels (K = 255 in their data gradients:
    misaligned) from 1024 channels over 19 x 19 (4 x 361 = 1444 rows: misaligned M), 512 over
    38 x 38 (weight gradient) and 256 over 76 x 76.
  - Conv-TasNet (Luo & Mesgarani 2019; pytorch/audio examples/source_separation/conv_tasnet, the
    paper's best non-causal configuration): N = 512 encoder filters of L = 16 samples at stride 8
    (padding 8: 4001 frames per 4 s mixture at 8 kHz), bottleneck B = 128, TCN hidden H = 512 (each
    block's 1x1 input convolution 128 -> 512), two sources (mask 128 -> 2 * 512), the decoder's
    512 -> 16-sample transposed convolution per source. Training batch 16 (the reference recipe's
    total: 64016 rows), and one mixture at inference (4001 rows, 8002 for the decoder over both
    sources: misaligned M).
  - Mult-VAE (Liang et al. 2018, WWW; the authors' notebook dawenl/vae_cf): [I -> 600 -> 200 ->
    600 -> I] (the encoder's last layer 600 -> 2 * 200, mean and log-variance), I = 20108 ML-20M
    items (Table 1; not a multiple of 8: misaligned K), batch 500 users for training (misaligned M,
    and K in the weight gradient), 2000 for validation.
  - SR-GNN (Wu et al. 2019; the authors' code CRIPAC-DIG/SR-GNN, pytorch_code): hidden 100, batch
    100, Diginetica's n_node 43098 (the scores run over embedding[1:]: 43097 items); the gated
    GNN's hidden-to-gates GEMM 100 -> 3 * 100 (K = 100: misaligned) over a batch whose sessions pad
    to 21 distinct items (chosen here: 2100 rows, misaligned M).
  - NFM (He & Chua 2017; the authors' code hexiangnan/neural_factorization_machine): hidden
    factor 64, one hidden layer [64] over the Bi-Interaction pooling, batch 128 (the code's
    defaults; Frappe).
"""

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261211


def llm_shapes_test11(rng):
    openllama_hidden, openllama_ffn = 3200, 8640
    xlmr_tokens = 48 * 256
    return [
        ("openllama3b_qkv_fwd_t2048", 2048, 3 * openllama_hidden, openllama_hidden, "llm"),
        ("openllama3b_gateup_fwd_t2048", 2048, 2 * openllama_ffn, openllama_hidden, "llm"),
        ("openllama3b_down_dgrad_t4096", 4096, openllama_ffn, openllama_hidden, "llm"),
        ("openllama3b_o_wgrad_t8192", openllama_hidden, openllama_hidden, 8192, "llm"),
        ("openllama3b_lmhead_fwd_t1024", 1024, 32000, openllama_hidden, "llm"),
        ("openllama3b_qkv_b36", 36, 3 * openllama_hidden, openllama_hidden, "llm"),
        ("xlmrb_qkv_fwd_t12288", xlmr_tokens, 3 * 768, 768, "llm"),
        ("xlmrb_ffn1_fwd_t12288", xlmr_tokens, 3072, 768, "llm"),
        ("xlmrb_ffn2_wgrad_t12288", 3072, 768, xlmr_tokens, "llm"),
        ("xlmrb_mlm_dgrad_t512", 512, 768, 250002, "llm"),
    ]


def moe_shapes_test11(rng, expert_tokens):
    """One routed batch: every expert's token count drawn around the mean (routing is never
    balanced), the up (gate and up fused) and down projections of the first three kept; then one
    decode step's counts, the busiest expert's up projection kept (it bounds the step)."""
    hidden, ffn, experts = 6400, 18304, 16
    loads = [expert_tokens(rng, 4096, experts, 1) for _ in range(experts)]
    rows = []
    for i, t in enumerate(loads[:3]):
        rows.append((f"hunyuanl_expert_up_{i}", t, 2 * ffn, hidden, "moe"))
        rows.append((f"hunyuanl_expert_down_{i}", t, hidden, ffn, "moe"))
    busiest = max(expert_tokens(rng, 512, experts, 1) for _ in range(experts))
    rows += [
        ("hunyuanl_expert_up_decode_b512", busiest, 2 * ffn, hidden, "moe"),
        ("hunyuanl_router_t4096", 4096, experts, hidden, "moe"),
        ("hunyuanl_router_dgrad_t4096", 4096, hidden, experts, "moe"),
        ("hunyuanl_shared_down_t512", 512, hidden, ffn, "moe"),
    ]
    return rows


def vision_speech_shapes_test11(rng, training_triplet):
    images = 4  # batch 64 in subdivisions of 16
    res1, det19, det76 = images * 304 * 304, images * 19 * 19, images * 76 * 76
    rows = [
        ("yolov3_res1_reduce_fwd_b4", res1, 32, 64, "vision"),
        ("yolov3_res1_reduce_dgrad_b4", res1, 64, 32, "vision"),
        ("yolov3_res1_conv3_fwd_b4", res1, 64, 32 * 9, "vision"),
        ("yolov3_det19_fwd_b4", det19, 255, 1024, "vision"),
        ("yolov3_det19_dgrad_b4", det19, 1024, 255, "vision"),
        ("yolov3_det38_wgrad_b4", 512, 255, images * 38 * 38, "vision"),
        ("yolov3_det76_dgrad_b4", det76, 256, 255, "vision"),
    ]
    frames = 4001  # 4 s at 8 kHz, kernel 16, stride 8, padding 8
    train = 16 * frames
    rows += [
        ("convtasnet_enc_fwd_b16", train, 512, 16, "speech"),
        ("convtasnet_enc_wgrad_b16", 16, 512, train, "speech"),
        ("convtasnet_bottleneck_fwd_b16", train, 128, 512, "speech"),
        ("convtasnet_block_in_wgrad_b16", 128, 512, train, "speech"),
        ("convtasnet_mask_fwd_b16", train, 2 * 512, 128, "speech"),
        ("convtasnet_enc_fwd_b1", frames, 512, 16, "speech"),
        ("convtasnet_dec_fwd_b1", 2 * frames, 16, 512, "speech"),
    ]
    return rows


def recsys_shapes_test11(rng, training_triplet):
    items, users = 20108, 500
    rows = [
        ("multvae_enc0_fwd_b500", users, 600, items, "recsys"),
        ("multvae_dec_out_fwd_b500", users, items, 600, "recsys"),
        ("multvae_dec_out_wgrad_b500", 600, items, users, "recsys"),
        ("multvae_dec_out_fwd_b2000", 2000, items, 600, "recsys"),
    ]
    sessions, scored, hidden = 100, 43098 - 1, 100
    rows += [
        ("srgnn_gnn_gh_fwd_b100", sessions * 21, 3 * hidden, hidden, "recsys"),
        ("srgnn_scores_fwd_b100", sessions, scored, hidden, "recsys"),
    ]
    rows += [
        ("nfm_hidden_fwd_b128", 128, 64, 64, "recsys"),
        ("nfm_hidden_wgrad_b128", 64, 64, 128, "recsys"),
    ]
    return rows
