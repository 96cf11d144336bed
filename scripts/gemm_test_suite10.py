"""Sources of the tenth GEMM test suite (`scripts/gemm_test_suite.py --suite test10`, seed 20261210,
bench/shapes/gemm_shapes_test10.csv), kept apart so the generator stays short. The fresh suite for
the next model change's score, from public model configurations that no earlier suite (dev,
calibration extras, test to test9) uses, plus 30 log-uniform random sizes, ~30% misaligned overall;
sized like test9 so `gemm measure` covers every shape within ~220 s (no shape above ~0.6 TFLOP).
Like suites 8 and 9 it carries narrow source GEMMs, thirteen (an M, N or K of 12-64: a 20-token and
a 12-sequence decode step, Moonlight's 64-expert router, SqueezeNet's 16-, 32- and 48-channel
squeeze layers and 16-channel expand layer, PointNet's 64-channel layer and 50 part scores, Tacotron
2's 32-filter location convolution (K = 62), its 32 -> 128 projection and its 64-row decoder step),
five of them misaligned, since the misaligned narrow / short-K class is where the model is weakest
(short K-loops of the kernels without TMA priced too slow against split-K, small 32x32 tiles). The
MoE sources draw six experts' token counts (three Moonlight, three Skywork-MoE) before the random
sizes, which keeps every random shape small (all under 0.03 TFLOP with this seed; drawing one, two,
four or five would have put one at 4.4 or 1.2 TFLOP):
  - Pythia-1.4B (EleutherAI/pythia-1.4b config.json): hidden 2048, intermediate 8192 (GELU, not
    gated), 16 heads of 128 (fused QKV 3 * 2048 = 6144), vocabulary 50304 (padded), untied LM head;
    a decode step of 20 sequences (M = 20: misaligned).
  - RWKV-4 430M (RWKV/rwkv-4-430m-pile config.json): hidden 1024, attention_hidden_size 1024,
    intermediate 4 * 1024 = 4096 (channel mixing: key 1024 -> 4096, squared ReLU, value
    4096 -> 1024; time mixing: receptance, key, value and output 1024 -> 1024), context 1024,
    vocabulary 50277 (odd: the head's data gradient has a misaligned K); training on 20 sequences
    of 1024 tokens, and a decode step of 12 sequences (M = 12: misaligned).
  - Moonlight-16B-A3B (moonshotai/Moonlight-16B-A3B config.json): hidden 2048, 64 routed experts of
    moe_intermediate 1408 (gate and up fused: 2816), top-6, two shared experts run as one MLP of
    2 * 1408 = 2816 (gate and up fused: 5632); its router is a 2048 -> 64 GEMM.
  - Skywork-MoE (Skywork/Skywork-MoE-Base config.json, upcycled from Skywork-13B): hidden 4608,
    16 experts of intermediate 12288 (gate and up fused: 24576), top-2.
  - SqueezeNet 1.1 (Iandola et al. 2016; torchvision's squeezenet1_1): Fire modules of squeeze
    1x1 convolutions 64 -> 16 (fire2, over 55 x 55), 128 -> 32 (fire4, over 27 x 27), 256 -> 48
    (fire6, over 13 x 13) and expand 1x1 convolutions 16 -> 64 (fire2), the 512 -> 1000 classifier
    convolution over 13 x 13. Training at batch 64 (rows = batch x positions), and the 10-crop
    evaluation of one image (batch 10: 7290 and 1690 rows, misaligned M).
  - PointNet (Qi et al. 2017, Figure 2): the shared MLP's 64 -> 128 layer over the 1024 points of
    32 clouds, and the segmentation network's last layer 128 -> m over 2048 points per shape with
    m = 50 ShapeNet part labels (N = 50, and K = 50 in its data gradient: misaligned); batch 16 for
    the segmentation network (chosen here).
  - Tacotron 2 (Shen et al. 2018; NVIDIA/tacotron2 hparams.py): encoder convolutions of 512
    channels, kernel 5 (K = 2560), location-sensitive attention with 32 filters of kernel 31 over
    the 2 attention-weight channels (K = 62: misaligned, N = 32) and its 32 -> 128 projection, the
    attention LSTM of 1024 units over the prenet's 256 and the 512-wide context (input 768 -> 4 *
    1024 gates, one decoder step of the batch), the linear projection 1024 + 512 = 1536 -> 80 mel
    channels. Batch 64 (hparams), padded to 160 characters (10240 encoder rows) and 800 frames
    (51200 decoder rows; chosen here).
  - GRU4Rec (Hidasi et al. 2016): a GRU of 100 hidden units (the paper's setting) over session-
    parallel mini-batches, its hidden-to-gates GEMM per step (100 -> 3 * 100; K = 100: misaligned),
    and the output scores over the mini-batch's target items plus shared sampled negatives (512
    sessions x (512 + 2048) items, K = 100; batch and sample count chosen here).
  - ESMM (Ma et al. 2018): embeddings of 18 per feature, MLP 360 -> 200 -> 80 -> 2 in each of the
    CVR and CTR towers; the first layer's forward, data and weight gradients at batch 8192 (chosen
    here).
"""

from gemm_suite_sources import expert_layer_rows

RANDOM_COUNT = 30
MISALIGNED_SHARE = 0.30
DEFAULT_SEED = 20261210


def llm_shapes_test10(rng):
    pythia_tokens, rwkv_tokens = 12288, 20 * 1024
    return [
        ("pythia1b4_qkv_fwd_t12288", pythia_tokens, 3 * 2048, 2048, "llm"),
        ("pythia1b4_mlp_up_fwd_t8192", 8192, 8192, 2048, "llm"),
        ("pythia1b4_mlp_down_wgrad_t8192", 8192, 2048, 8192, "llm"),
        ("pythia1b4_lmhead_fwd_t2048", 2048, 50304, 2048, "llm"),
        ("pythia1b4_o_t20", 20, 2048, 16 * 128, "llm"),
        ("rwkv4_430m_cm_key_fwd_t20480", rwkv_tokens, 4 * 1024, 1024, "llm"),
        ("rwkv4_430m_cm_value_wgrad_t20480", 4 * 1024, 1024, rwkv_tokens, "llm"),
        ("rwkv4_430m_head_dgrad_t4096", 4096, 1024, 50277, "llm"),
        ("rwkv4_430m_tm_receptance_b12", 12, 1024, 1024, "llm"),
    ]


def moe_shapes_test10(rng, expert_tokens):
    """Per expert: the up projection (gate and up fused) and the down projection, for `count`
    experts of one routed batch each (token counts drawn around the mean)."""
    layers = [  # name, tokens routed, experts, top-k, hidden, up width, down width, experts drawn
        ("moonlight", 16384, 64, 6, 2048, 2 * 1408, 1408, 3),
        ("skyworkmoe", 8192, 16, 2, 4608, 2 * 12288, 12288, 3),
    ]
    rows = expert_layer_rows(rng, layers, expert_tokens)
    rows += [
        ("moonlight_router_t16384", 16384, 64, 2048, "moe"),
        ("moonlight_shared_gateup_t8192", 8192, 2 * 2 * 1408, 2048, "moe"),
    ]
    return rows


def vision_speech_shapes_test10(rng, training_triplet):
    batch, crops = 64, 10
    rows = [
        ("sqz11_fire2_squeeze_fwd_b64", batch * 55 * 55, 16, 64, "vision"),
        ("sqz11_fire2_expand1_fwd_b64", batch * 55 * 55, 64, 16, "vision"),
        ("sqz11_fire6_squeeze_dgrad_b64", batch * 13 * 13, 256, 48, "vision"),
        ("sqz11_fire4_squeeze_fwd_crop10", crops * 27 * 27, 32, 128, "vision"),
        ("sqz11_classifier_fwd_crop10", crops * 13 * 13, 1000, 512, "vision"),
    ]
    cloud_points, part_points = 32 * 1024, 16 * 2048
    rows += [
        ("pointnet_mlp2_fwd_b32", cloud_points, 128, 64, "vision"),
        ("pointnet_seg_out_fwd_b16", part_points, 50, 128, "vision"),
        ("pointnet_seg_out_dgrad_b16", part_points, 128, 50, "vision"),
    ]
    chars, frames = 64 * 160, 64 * 800
    rows += [
        ("tacotron2_enc_conv_fwd_b64", chars, 512, 512 * 5, "speech"),
        ("tacotron2_loc_conv_fwd_b64", chars, 32, 2 * 31, "speech"),
        ("tacotron2_loc_dense_fwd_b64", chars, 128, 32, "speech"),
        ("tacotron2_att_lstm_step_b64", 64, 4 * 1024, 256 + 512, "speech"),
        ("tacotron2_mel_proj_wgrad_b64", 1024 + 512, 80, frames, "speech"),
    ]
    return rows


def recsys_shapes_test10(rng, training_triplet):
    sessions, scored = 512, 512 + 2048
    rows = [
        ("gru4rec_gates_step_b512", sessions, 3 * 100, 100, "recsys"),
        ("gru4rec_score_fwd_b512", sessions, scored, 100, "recsys"),
        ("gru4rec_score_wgrad_b512", scored, 100, sessions, "recsys"),
    ]
    rows += training_triplet("esmm_l0_b8192", 8192, 360, 200, "recsys")
    return rows
