"""Sources of the fourteenth GEMM test suite (`scripts/gemm_test_suite.py --suite test14`, seed
20261217, bench/shapes/gemm_shapes_test14.csv), kept apart so the generator stays short. The seed is
the first from 20261216 (suite 13's seed plus one) whose 30 random sizes all stay under 0.6 TFLOP:
20261216 drew one of 2.8, 20261217 keeps them all at or below 0.54 (the largest shape of the suite;
no source shape is above 0.29); chosen by size alone, before anything was timed. The MoE source
draws 128 token counts (every expert of the routed batch and of the decode step) before the random
sizes. The fresh suite for the score of the next model change (suite 13 scores the current one in
run 94), from public model configurations that no earlier suite (dev, calibration extras, test to
test13) uses, plus 30 log-uniform random sizes, ~30% misaligned overall (22 of 72: 20 source GEMMs,
2 random); 3.0 TFLOP in all (test13: 3.0), so `gemm measure` covers every shape within ~220 s. Like
suites 8 to 13 it carries narrow source GEMMs, fourteen (an M, N or K of 16-64: a 30- and a
60-sequence decode step (two GEMMs each), XVERSE-MoE's 64-expert router (forward and data gradient)
and a decode step's busiest expert, Inception-v3's 3-channel first convolution (K = 27, N = 32), its
32-channel pool branch and 48-channel 5x5 reduction (data gradient), Stable Diffusion's 4-channel
latent input convolution (K = 36), KGAT's first propagation layer (64 -> 64, forward and weight
gradient) and its last (32 -> 16)), ten of them misaligned, since the misaligned narrow / short-K
class is where the model is weakest; Stable Diffusion's output convolution adds an N of 4:
  - EXAONE 3.5 2.4B (LGAI-EXAONE/EXAONE-3.5-2.4B-Instruct config.json): hidden 2560, intermediate
    7168 (gate and up fused: 14336), 32 heads of head_dim 80 with 8 KV heads (fused QKV 2560 +
    2 * 640 = 3840), vocabulary 102400; a decode step of 30 sequences (misaligned M).
  - H2O-Danube3-4B (h2oai/h2o-danube3-4b-chat config.json): hidden 3840, intermediate 10240 (gate
    and up fused: 20480), 32 heads of 120 with 8 KV heads (fused QKV 3840 + 2 * 960 = 5760),
    vocabulary 32000, untied LM head; a decode step of 60 sequences (misaligned M).
  - XVERSE-MoE-A4.2B (xverse/XVERSE-MoE-A4.2B config.json): hidden 2560, 64 routed experts of
    intermediate 1728 (gate and up fused: 3456), top-6, two shared experts (num_shared_experts;
    taken here at the routed width and run as one MLP of 2 * 1728 = 3456, gate and up fused: 6912),
    router 2560 -> 64, vocabulary 100534 (not a multiple of 8: the LM head's data gradient has a
    misaligned K). 8192 tokens routed (the first three experts' GEMMs kept) and a decode step of
    256 sequences (about 24 tokens per expert; the busiest expert's up projection kept).
  - Inception-v3 (Szegedy et al. 2016; torchvision inception.py): 299 x 299 input, Conv2d_1a 3 -> 32
    at stride 2 over 149 x 149 (K = 27: misaligned), Conv2d_4a 80 -> 192 over 71 x 71 (K = 720),
    Mixed_5b (InceptionA over 192 channels at 35 x 35: pool branch 192 -> 32, 5x5 reduction
    192 -> 48, data gradient), at training batch 32 (chosen here); and one image at inference,
    Mixed_6b's 1x7 convolution 128 -> 128 over 17 x 17 (K = 896, 289 rows: misaligned M).
  - Stable Diffusion v1.5 UNet (stable-diffusion-v1-5/stable-diffusion-v1-5, formerly
    runwayml/stable-diffusion-v1-5, unet/config.json): 4 latent channels over 64 x 64 (512 x 512
    images), block_out_channels 320 / 640 / 1280 / 1280, cross_attention_dim 768, 3x3 convolutions
    as GEMMs (conv_in 4 -> 320, K = 36: misaligned; conv_out 320 -> 4; a first-block ResNet
    convolution 320 -> 320; the mid block's 1280 -> 1280 over 8 x 8, weight gradient) and the
    transformer blocks' GEGLU projection 320 -> 2 * 4 * 320 = 2560, at training batch 8 (chosen
    here); and the third block's cross-attention keys and values (768 -> 2 * 1280) over the text
    encoder's 77 tokens for one image with classifier-free guidance (2 x 77 = 154 rows: misaligned
    M).
  - KGAT (Wang et al. KDD 2019; the authors' code xiangwang1223/knowledge_graph_attention_network,
    Amazon-book: 70679 users, 88572 entities, 24915 items): embedding 64, Bi-Interaction layers
    [64, 32, 16] over all 159251 user and entity nodes (misaligned M, and K in the weight gradient;
    W_gc and W_bi have the same shapes), and the full-ranking scores over the items with the four
    layers' embeddings concatenated (K = 64 + 64 + 32 + 16 = 176) for the code's test batch of 2048
    users (twice the README's training batch of 1024) and the last, partial one (70679 mod 2048 =
    1047 users: misaligned M).
  - NRMS (Wu et al. EMNLP 2019; the MIND configuration of recommenders-team/recommenders,
    nrms.yaml): 300-wide word embeddings, 20 heads of 20 (query, key and value run here as one
    300 -> 3 * 400 GEMM; K = 300: misaligned, and M in the weight gradient), additive attention
    400 -> 200, titles of 30 words, 50 clicked and 4 + 1 candidate titles per user, batch 32 (52800
    word rows).
"""

from gemm_suite_sources import routed_and_decode_expert_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261217


def llm_shapes_test14(rng):
    exaone_hidden, exaone_ffn, exaone_qkv = 2560, 7168, 32 * 80 + 2 * 8 * 80
    danube_hidden, danube_ffn, danube_qkv = 3840, 10240, 32 * 120 + 2 * 8 * 120
    return [
        ("exaone35_2b4_qkv_fwd_t8192", 8192, exaone_qkv, exaone_hidden, "llm"),
        ("exaone35_2b4_gateup_fwd_t2048", 2048, 2 * exaone_ffn, exaone_hidden, "llm"),
        ("exaone35_2b4_down_fwd_t4096", 4096, exaone_hidden, exaone_ffn, "llm"),
        ("exaone35_2b4_lmhead_fwd_t256", 256, 102400, exaone_hidden, "llm"),
        ("exaone35_2b4_qkv_b30", 30, exaone_qkv, exaone_hidden, "llm"),
        ("exaone35_2b4_gateup_b30", 30, 2 * exaone_ffn, exaone_hidden, "llm"),
        ("danube3_4b_qkv_fwd_t4096", 4096, danube_qkv, danube_hidden, "llm"),
        ("danube3_4b_gateup_fwd_t1024", 1024, 2 * danube_ffn, danube_hidden, "llm"),
        ("danube3_4b_down_wgrad_t2048", danube_ffn, danube_hidden, 2048, "llm"),
        ("danube3_4b_lmhead_fwd_t1024", 1024, 32000, danube_hidden, "llm"),
        ("danube3_4b_qkv_b60", 60, danube_qkv, danube_hidden, "llm"),
        ("danube3_4b_down_b60", 60, danube_hidden, danube_ffn, "llm"),
    ]


def moe_shapes_test14(rng, expert_tokens):
    hidden, ffn, experts, top_k = 2560, 1728, 64, 6
    rows = routed_and_decode_expert_rows(rng, expert_tokens, "xversemoe", hidden, 2 * ffn, ffn,
                                         experts, top_k, routed_tokens=8192, decode_batch=256)
    rows += [
        ("xversemoe_router_t8192", 8192, experts, hidden, "moe"),
        ("xversemoe_router_dgrad_t8192", 8192, hidden, experts, "moe"),
        ("xversemoe_shared_up_t8192", 8192, 2 * 2 * ffn, hidden, "moe"),
        ("xversemoe_lmhead_dgrad_t512", 512, hidden, 100534, "moe"),
    ]
    return rows


def vision_speech_shapes_test14(rng, training_triplet):
    batch = 32
    rows = [
        ("inception3_conv1a_fwd_b32", batch * 149 * 149, 32, 3 * 9, "vision"),
        ("inception3_conv4a_fwd_b32", batch * 71 * 71, 192, 80 * 9, "vision"),
        ("inception3_5b_pool_fwd_b32", batch * 35 * 35, 32, 192, "vision"),
        ("inception3_5b_5x5_1_dgrad_b32", batch * 35 * 35, 192, 48, "vision"),
        ("inception3_6b_7x7_2_fwd_b1", 17 * 17, 128, 128 * 7, "vision"),
    ]
    batch, latent = 8, 64 * 64
    cfg_context = 2 * 77  # the text encoder's 77 tokens, conditional and unconditional
    rows += [
        ("sd15_unet_conv_in_fwd_b8", batch * latent, 320, 4 * 9, "vision"),
        ("sd15_unet_conv_out_fwd_b8", batch * latent, 4, 320 * 9, "vision"),
        ("sd15_unet_s1_resnet_conv_fwd_b8", batch * latent, 320, 320 * 9, "vision"),
        ("sd15_unet_s1_geglu_fwd_b8", batch * latent, 2 * 4 * 320, 320, "vision"),
        ("sd15_unet_mid_resnet_conv_wgrad_b8", 1280 * 9, 1280, batch * 8 * 8, "vision"),
        ("sd15_unet_s3_attn2_kv_fwd_cfg", cfg_context, 2 * 1280, 768, "vision"),
    ]
    return rows


def recsys_shapes_test14(rng, training_triplet):
    users, entities, items = 70679, 88572, 24915
    nodes = users + entities
    test_batch = 2048
    tail = users % test_batch
    concat_dim = 64 + 64 + 32 + 16  # the embedding and the three layers' outputs
    rows = [
        ("kgat_bi_l1_fwd_amazonbook", nodes, 64, 64, "recsys"),
        ("kgat_bi_l1_wgrad_amazonbook", 64, 64, nodes, "recsys"),
        ("kgat_bi_l3_fwd_amazonbook", nodes, 16, 32, "recsys"),
        (f"kgat_rank_fwd_b{test_batch}", test_batch, items, concat_dim, "recsys"),
        (f"kgat_rank_fwd_tail{tail}", tail, items, concat_dim, "recsys"),
    ]
    # Every word of every clicked and candidate title in the batch goes through the news encoder.
    word_rows = 32 * (50 + 4 + 1) * 30
    rows += [
        ("nrms_word_qkv_fwd_b32", word_rows, 3 * 400, 300, "recsys"),
        ("nrms_word_qkv_wgrad_b32", 300, 3 * 400, word_rows, "recsys"),
        ("nrms_word_att_fwd_b32", word_rows, 200, 400, "recsys"),
    ]
    return rows
