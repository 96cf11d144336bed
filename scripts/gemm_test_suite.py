#!/usr/bin/env python3
"""Generate the GEMM *test* shape suite (bench/shapes/gemm_shapes_test.csv).

The dev suite (bench/shapes/gemm_shapes_dev.csv) is where the model is iterated on; its figures
are development figures. This script draws a disjoint suite from public model configurations the
dev suite does not use, plus log-uniform random sizes with a misaligned share, so a model change
can be scored once on shapes that never steered it. A later model change is scored on a fresh
suite: bump --seed and swap the sources below.

Sources (public configuration files / papers; the dimensions used are quoted next to each):
  - Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): hidden 4096, intermediate 14336,
    8 experts, top-2 routing, 32 heads / 8 KV heads of 128.
  - Qwen2-7B (Qwen/Qwen2-7B config.json): hidden 3584, intermediate 18944, 28 heads, 4 KV heads
    of 128.
  - Qwen1.5-MoE-A2.7B (Qwen/Qwen1.5-MoE-A2.7B config.json): hidden 2048, expert intermediate 1408,
    60 experts, top-4, shared expert intermediate 5632.
  - DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json): hidden 7168, moe_intermediate 2048,
    256 routed experts, top-8, q_lora_rank 1536, kv_lora_rank 512 (+64 rope dims).
  - Gemma-7B (google/gemma-7b config.json): hidden 3072, intermediate 24576, 16 heads of 256.
  - Falcon-7B (tiiuae/falcon-7b config.json): hidden 4544, multi-query (71 heads of 64 + 1 KV
    head): fused QKV width 4544 + 2*64 = 4672, MLP 4 * 4544 = 18176.
  - BERT-large (Devlin et al. 2019): hidden 1024, intermediate 4096, sequence 512.
  - Phi-3-mini (microsoft/Phi-3-mini-4k-instruct config.json): hidden 3072, intermediate 8192,
    fused QKV 9216.
  - DeepFM (Guo et al. 2017, Criteo setup): 39 fields x 10-dim embeddings = 390 inputs,
    MLP 400-400-400.
  - Wide & Deep (Cheng et al. 2016): concatenated embeddings ~1200 inputs, MLP 1024-512-256.
  - DIN (Zhou et al. 2018): MLP 200-80 over ~ 4 * 18-dim * fields (input 576 here).
  - HSTU (Zhai et al. 2024, "Actions Speak Louder than Words"): d = 256 and d = 1024 variants
    (UVQK projection 4d wide, output projection d).
Training GEMMs are emitted as the forward (tokens x out x in), data gradient (tokens x in x out)
and weight gradient (in x out x tokens) products, as the dev suite names them.

Second suite (`--suite test2`, default seed 20261202, bench/shapes/gemm_shapes_test2.csv): for
the model change after run 26 (kernels without TMA), from sources neither the dev suite, the
calibration extras nor the first test suite use, with a larger misaligned share (40%):
  - Llama-2-13B (meta-llama/Llama-2-13b-hf config.json): hidden 5120, intermediate 13824,
    40 heads of 128.
  - GPT-2 XL (openai-community/gpt2-xl config.json): hidden 1600, MLP 6400, vocabulary 50257
    (the LM head's data gradient has K = 50257: odd, misaligned).
  - OPT-1.3B (facebook/opt-1.3b config.json): hidden 2048, ffn 8192, vocabulary 50272.
  - GPT-NeoX-20B (EleutherAI/gpt-neox-20b config.json): hidden 6144, intermediate 24576.
  - OLMoE-1B-7B (allenai/OLMoE-1B-7B-0924 config.json): hidden 2048, expert intermediate 1024,
    64 experts, top-8.
  - DBRX (databricks/dbrx-base config.json): d_model 6144, expert ffn 10752, 16 experts, top-4.
  - NeuMF (He et al. 2017, "Neural Collaborative Filtering"): MLP tower 256-128-64 over two
    64-dim embeddings (input 128) plus a GMF branch.
  - YouTube DNN (Covington et al. 2016): towers 1024-512-256 over concatenated 256-dim
    embeddings (input 3 x 256 = 768 here) and softmax over candidate videos.
  - MMoE (Ma et al. 2018): 8 experts of 512 hidden units over a 499-wide dense input (an odd
    input width from one-hot census features: misaligned K).

Third suite (`--suite test3`, default seed 20261203, bench/shapes/gemm_shapes_test3.csv): for the
model change after run 40 (feed-rate, epilogue and wave mechanisms), from sources that no earlier
suite (dev, calibration extras, test, test2) uses, ~30% misaligned:
  - Yi-34B (01-ai/Yi-34B config.json): hidden 7168, intermediate 20480, 56 heads / 8 KV heads
    of 128, vocabulary 64000.
  - InternLM2-20B (internlm/internlm2-20b config.json): hidden 6144, intermediate 16384,
    48 heads / 8 KV heads of 128.
  - StableLM-2-1.6B (stabilityai/stablelm-2-1_6b config.json): hidden 2048, intermediate 5632,
    32 heads of 64, vocabulary 100352.
  - BLOOM-7B1 (bigscience/bloom-7b1 config.json): hidden 4096, MLP 4 * 4096, vocabulary 250880.
  - Mixtral-8x22B (mistralai/Mixtral-8x22B-v0.1 config.json): hidden 6144, intermediate 16384,
    8 experts, top-2.
  - Phi-3.5-MoE (microsoft/Phi-3.5-MoE-instruct config.json): hidden 4096, intermediate 6400,
    16 experts, top-2.
  - Qwen2-57B-A14B (Qwen/Qwen2-57B-A14B config.json): hidden 3584, moe_intermediate 2560,
    64 experts, top-8, shared expert intermediate 20480.
  - ViT-B/16 and ViT-H/14 (Dosovitskiy et al. 2021): hidden 768 / 1280, MLP 3072 / 5120,
    197 / 257 tokens per 224x224 image (odd token counts: misaligned M, and K in the weight
    gradients).
  - MLP-Mixer-B/16 (Tolstikhin et al. 2021): 196 patches, hidden 768, token-mixing MLP 384,
    channel-mixing MLP 3072.
  - SASRec (Kang & McAuley 2018): hidden 50, sequence 200 (K = 50: misaligned rows).
  - Wukong-style layers (Zang et al. 2024, "Wukong: Towards a Scaling Law for Large-Scale
    Recommendation"): a Linear Compress Block mixing n = 64 embeddings of d = 128 into 32
    (rows = batch x d), and the FMB's MLP over the flattened 64 x 32 interaction (2048 -> 1024);
    the layer structure is the paper's, the widths are chosen here.
  - DHEN-style layers (Zhang et al. 2022, "DHEN: A Deep and Hierarchical Ensemble Network"):
    an ensemble layer over 40 feature embeddings of 96 (input 3840) into 1536 + a 768 projection;
    the widths are chosen here.

Fourth suite (`--suite test4`, default seed 20261204, bench/shapes/gemm_shapes_test4.csv): for the
model change after run 47 (selection latency, kernels without TMA), from sources that no earlier
suite (dev, calibration extras, test, test2, test3) uses, ~30% misaligned, sized so that
`gemm measure` covers every shape within ~200 s (few shapes above ~1 TFLOP):
  - Gemma-2-9B (google/gemma-2-9b config.json): hidden 3584, intermediate 14336, 16 heads / 8 KV
    heads of 256 (fused QKV 4096 + 2 * 2048 = 8192, output projection 4096 -> 3584).
  - Qwen2.5-14B (Qwen/Qwen2.5-14B config.json): hidden 5120, intermediate 13824, 40 heads / 8 KV
    heads of 128 (fused QKV 7168), vocabulary 152064.
  - Command-R (CohereForAI/c4ai-command-r-v01 config.json): hidden 8192, intermediate 22528,
    64 heads of 128 (fused QKV 3 * 8192).
  - GPT-J-6B (EleutherAI/gpt-j-6b config.json): n_embd 4096, n_inner 16384, vocabulary 50400.
  - Flan-T5-XL (google/flan-t5-xl config.json): d_model 2048, gated-GELU d_ff 5120 (wi_0 and
    wi_1 fused: 10240), 32 heads of 64.
  - Grok-1 (xai-org/grok-1, model.py): hidden 6144, FFN 32768 (widening factor 8, gated),
    8 experts, top-2.
  - Snowflake Arctic (Snowflake/snowflake-arctic-instruct config.json): hidden 7168, expert
    intermediate 4864, 128 experts, top-2, plus the dense residual MLP of the same width.
  - Granite-3.0-3B-A800M (ibm-granite/granite-3.0-3b-a800m-base config.json): hidden 1536,
    expert intermediate 512, 40 experts, top-8.
  - Whisper-large-v3 and Whisper-small encoders (openai/whisper-* config.json): d_model 1280 /
    768, FFN 5120 / 3072, 1500 frames per 30 s window (batch 5: 7500 tokens, misaligned M).
  - wav2vec 2.0 large (facebook/wav2vec2-large-960h-lv60 config.json): hidden 1024, intermediate
    4096, ~49.9 frames per second (15 s: 749 frames; batch 12: 8988 tokens).
  - CLIP ViT-L/14 (openai/clip-vit-large-patch14 config.json): vision width 1024, MLP 4096, 257
    tokens; text width 768, MLP 3072, 77 tokens (batch 50: 3850 tokens, misaligned M).
  - Swin-B (Liu et al. 2021): C = 128, stage-1 dim 128 over 56 x 56 tokens and stage-3 dim 512
    over 14 x 14 tokens, MLP ratio 4.
  - DLRM (Criteo Terabyte / MLPerf DLRM-DCNv2 layer widths, as the dev suite's) at batches the
    earlier suites do not use: 32768, 16384 and the last, partial batch of a Criteo Kaggle epoch
    (45840617 samples mod 65536 = 30953 rows: misaligned M, and K in its weight gradients).

Every row is C[m,n] = A[m,k] * B[k,n] in bf16 (TN), like the dev suite. Shapes that coincide in
(m, n, k) with a dev or calibration-extra row are dropped. Run from the repository root:
    python3 scripts/gemm_test_suite.py > bench/shapes/gemm_shapes_test.csv
    python3 scripts/gemm_test_suite.py --suite test2 > bench/shapes/gemm_shapes_test2.csv
    python3 scripts/gemm_test_suite.py --suite test3 > bench/shapes/gemm_shapes_test3.csv
    python3 scripts/gemm_test_suite.py --suite test4 > bench/shapes/gemm_shapes_test4.csv
    python3 scripts/gemm_test_suite.py --suite test5 > bench/shapes/gemm_shapes_test5.csv
    python3 scripts/gemm_test_suite.py --suite test6 > bench/shapes/gemm_shapes_test6.csv
    python3 scripts/gemm_test_suite.py --suite test7 > bench/shapes/gemm_shapes_test7.csv
    python3 scripts/gemm_test_suite.py --suite test8 > bench/shapes/gemm_shapes_test8.csv
    python3 scripts/gemm_test_suite.py --suite test9 > bench/shapes/gemm_shapes_test9.csv
    python3 scripts/gemm_test_suite.py --suite test10 > bench/shapes/gemm_shapes_test10.csv
    python3 scripts/gemm_test_suite.py --suite test11 > bench/shapes/gemm_shapes_test11.csv
    python3 scripts/gemm_test_suite.py --suite test12 > bench/shapes/gemm_shapes_test12.csv
    python3 scripts/gemm_test_suite.py --suite test13 > bench/shapes/gemm_shapes_test13.csv
    python3 scripts/gemm_test_suite.py --suite test14 > bench/shapes/gemm_shapes_test14.csv
The fifth to fourteenth suites' sources are listed in scripts/gemm_test_suite5.py to
scripts/gemm_test_suite14.py (one module per suite).
"""

import argparse
import csv
import math
import random
import sys
from pathlib import Path

import gemm_test_suite10
import gemm_test_suite11
import gemm_test_suite12
import gemm_test_suite13
import gemm_test_suite14
import gemm_test_suite5
import gemm_test_suite6
import gemm_test_suite7
import gemm_test_suite8
import gemm_test_suite9

EXCLUDED_SUITES = [
    "bench/shapes/gemm_shapes_dev.csv",
    "bench/shapes/gemm_shapes_calibration_extra.csv",
    "bench/shapes/gemm_shapes_calibration_extra2.csv",
]
# The second suite must not repeat a shape of the first (already scored) one.
EXCLUDED_SUITES_TEST2 = EXCLUDED_SUITES + ["bench/shapes/gemm_shapes_test.csv"]
# The third suite repeats no shape of any earlier suite.
EXCLUDED_SUITES_TEST3 = EXCLUDED_SUITES_TEST2 + ["bench/shapes/gemm_shapes_test2.csv"]
# The fourth suite repeats no shape of any earlier suite.
EXCLUDED_SUITES_TEST4 = EXCLUDED_SUITES_TEST3 + ["bench/shapes/gemm_shapes_test3.csv"]
EXCLUDED_SUITES_TEST5 = EXCLUDED_SUITES_TEST4 + ["bench/shapes/gemm_shapes_test4.csv"]
EXCLUDED_SUITES_TEST6 = EXCLUDED_SUITES_TEST5 + ["bench/shapes/gemm_shapes_test5.csv"]
EXCLUDED_SUITES_TEST7 = EXCLUDED_SUITES_TEST6 + ["bench/shapes/gemm_shapes_test6.csv"]
EXCLUDED_SUITES_TEST8 = EXCLUDED_SUITES_TEST7 + ["bench/shapes/gemm_shapes_test7.csv"]
EXCLUDED_SUITES_TEST9 = EXCLUDED_SUITES_TEST8 + ["bench/shapes/gemm_shapes_test8.csv"]
EXCLUDED_SUITES_TEST10 = EXCLUDED_SUITES_TEST9 + ["bench/shapes/gemm_shapes_test9.csv"]
EXCLUDED_SUITES_TEST11 = EXCLUDED_SUITES_TEST10 + ["bench/shapes/gemm_shapes_test10.csv"]
EXCLUDED_SUITES_TEST12 = EXCLUDED_SUITES_TEST11 + ["bench/shapes/gemm_shapes_test11.csv"]
EXCLUDED_SUITES_TEST13 = EXCLUDED_SUITES_TEST12 + ["bench/shapes/gemm_shapes_test12.csv"]
EXCLUDED_SUITES_TEST14 = EXCLUDED_SUITES_TEST13 + ["bench/shapes/gemm_shapes_test13.csv"]
BF16_BYTES = 2
TMA_ALIGNMENT_BYTES = 16
RANDOM_SHAPES = 26
MISALIGNED_SHARE = 0.30


def is_misaligned(m, k):
    # TN packed: lda = ldb = K, ldc = M (elements); TMA needs every row 16-byte aligned.
    return (k * BF16_BYTES) % TMA_ALIGNMENT_BYTES != 0 or (m * BF16_BYTES) % TMA_ALIGNMENT_BYTES != 0


def expert_tokens(rng, total, experts, top_k):
    """Tokens one expert receives: drawn around the mean (routing is never balanced)."""
    mean = total * top_k / experts
    return max(1, int(round(mean * rng.uniform(0.6, 1.4))))


def training_triplet(prefix, tokens, fan_in, fan_out, family):
    return [
        (f"{prefix}_fwd", tokens, fan_out, fan_in, family),
        (f"{prefix}_dgrad", tokens, fan_in, fan_out, family),
        (f"{prefix}_wgrad", fan_in, fan_out, tokens, family),
    ]


def llm_shapes(rng):
    rows = []
    # Dense LLM projections at a prefill/training token count and a decode-ish small batch.
    for tokens in (2048, 8192):
        rows += [
            (f"qwen2_7b_qkv_t{tokens}", tokens, 3584 + 2 * 4 * 128, 3584, "llm"),
            (f"qwen2_7b_gateup_t{tokens}", tokens, 2 * 18944, 3584, "llm"),
            (f"qwen2_7b_down_t{tokens}", tokens, 3584, 18944, "llm"),
        ]
    rows += [
        ("gemma7b_qkv_t4096", 4096, 3 * 16 * 256, 3072, "llm"),
        ("gemma7b_o_t4096", 4096, 3072, 16 * 256, "llm"),
        ("gemma7b_gateup_t4096", 4096, 2 * 24576, 3072, "llm"),
        ("gemma7b_down_t4096", 4096, 3072, 24576, "llm"),
        ("falcon7b_qkv_t4096", 4096, 4672, 4544, "llm"),
        ("falcon7b_mlp_up_t4096", 4096, 18176, 4544, "llm"),
        ("falcon7b_mlp_down_t4096", 4096, 4544, 18176, "llm"),
        ("phi3mini_qkv_t16", 16, 9216, 3072, "llm"),
        ("phi3mini_down_t16", 16, 3072, 8192, "llm"),
        ("phi3mini_gateup_t1024", 1024, 2 * 8192, 3072, "llm"),
    ]
    # BERT-large training at batch 32 x sequence 512.
    tokens = 32 * 512
    rows += [
        ("bertl_qkv_fwd", tokens, 3 * 1024, 1024, "llm"),
        ("bertl_ffn1_fwd", tokens, 4096, 1024, "llm"),
        ("bertl_ffn2_fwd", tokens, 1024, 4096, "llm"),
        ("bertl_ffn1_wgrad", 1024, 4096, tokens, "llm"),
    ]
    return rows


def moe_shapes(rng):
    """Expert GEMMs: tokens per expert drawn around the mean (routing is never balanced), so
    most expert row counts are odd sizes (a realistic source of misaligned M)."""
    rows = []
    for i in range(3):
        t = expert_tokens(rng, 8192, 8, 2)
        rows += [
            (f"mixtral_expert_gateup_{i}", t, 2 * 14336, 4096, "moe"),
            (f"mixtral_expert_down_{i}", t, 4096, 14336, "moe"),
        ]
    for i in range(3):
        t = expert_tokens(rng, 16384, 256, 8)
        rows += [
            (f"dsv3_expert_gateup_{i}", t, 2 * 2048, 7168, "moe"),
            (f"dsv3_expert_down_{i}", t, 7168, 2048, "moe"),
        ]
    rows += [
        ("dsv3_q_a_proj_t4096", 4096, 1536, 7168, "moe"),
        ("dsv3_kv_a_proj_t4096", 4096, 512 + 64, 7168, "moe"),
    ]
    for i in range(2):
        t = expert_tokens(rng, 4096, 60, 4)
        rows += [
            (f"qwenmoe_expert_gateup_{i}", t, 2 * 1408, 2048, "moe"),
            (f"qwenmoe_expert_down_{i}", t, 2048, 1408, "moe"),
        ]
    rows.append(("qwenmoe_shared_gateup_t4096", 4096, 2 * 5632, 2048, "moe"))
    return rows


def recsys_shapes(rng):
    rows = []
    rows += training_triplet("deepfm_l0_b16384", 16384, 390, 400, "recsys")
    rows += training_triplet("deepfm_l1_b16384", 16384, 400, 400, "recsys")
    rows += training_triplet("widedeep_l0_b32768", 32768, 1200, 1024, "recsys")
    rows += training_triplet("widedeep_l1_b32768", 32768, 1024, 512, "recsys")
    rows += training_triplet("din_l0_b4096", 4096, 576, 200, "recsys")
    rows += [
        ("hstu256_uvqk_t65536", 65536, 4 * 256, 256, "hstu"),
        ("hstu256_out_t65536", 65536, 256, 256, "hstu"),
        ("hstu1024_uvqk_t16384", 16384, 4 * 1024, 1024, "hstu"),
        ("hstu1024_out_t16384", 16384, 1024, 1024, "hstu"),
        ("hstu1024_uvqk_wgrad_t16384", 1024, 4 * 1024, 16384, "hstu"),
    ]
    return rows


def llm_shapes_test2(rng):
    rows = []
    for tokens in (4096, 16384):
        rows += [
            (f"llama2_13b_qkv_t{tokens}", tokens, 3 * 5120, 5120, "llm"),
            (f"llama2_13b_o_t{tokens}", tokens, 5120, 5120, "llm"),
            (f"llama2_13b_gateup_t{tokens}", tokens, 2 * 13824, 5120, "llm"),
            (f"llama2_13b_down_t{tokens}", tokens, 5120, 13824, "llm"),
        ]
    tokens = 8 * 1024
    rows += [
        ("gpt2xl_qkv_fwd", tokens, 3 * 1600, 1600, "llm"),
        ("gpt2xl_mlp_up_fwd", tokens, 6400, 1600, "llm"),
        ("gpt2xl_mlp_down_fwd", tokens, 1600, 6400, "llm"),
        ("gpt2xl_lmhead_fwd", tokens, 50257, 1600, "llm"),
        ("gpt2xl_lmhead_dgrad", tokens, 1600, 50257, "llm"),
        ("opt1b3_ffn1_fwd_t2048", 2048, 8192, 2048, "llm"),
        ("opt1b3_ffn2_wgrad_t2048", 8192, 2048, 2048, "llm"),
        ("opt1b3_lmhead_fwd_t2048", 2048, 50272, 2048, "llm"),
        ("neox20b_qkv_t2048", 2048, 3 * 6144, 6144, "llm"),
        ("neox20b_mlp_down_t2048", 2048, 6144, 24576, "llm"),
        ("neox20b_mlp_up_t64", 64, 24576, 6144, "llm"),
    ]
    return rows


def moe_shapes_test2(rng):
    rows = []
    for i in range(4):
        t = expert_tokens(rng, 8192, 64, 8)
        rows += [
            (f"olmoe_expert_gateup_{i}", t, 2 * 1024, 2048, "moe"),
            (f"olmoe_expert_down_{i}", t, 2048, 1024, "moe"),
        ]
    for i in range(3):
        t = expert_tokens(rng, 8192, 16, 4)
        rows += [
            (f"dbrx_expert_gateup_{i}", t, 2 * 10752, 6144, "moe"),
            (f"dbrx_expert_down_{i}", t, 6144, 10752, "moe"),
        ]
    return rows


def recsys_shapes_test2(rng):
    rows = []
    rows += training_triplet("neumf_l0_b65536", 65536, 128, 256, "recsys")
    rows += training_triplet("neumf_l1_b65536", 65536, 256, 128, "recsys")
    rows += training_triplet("ytdnn_l0_b16384", 16384, 768, 1024, "recsys")
    rows += training_triplet("ytdnn_l1_b16384", 16384, 1024, 512, "recsys")
    rows += training_triplet("mmoe_expert_b32768", 32768, 499, 512, "recsys")
    rows.append(("ytdnn_softmax_b4096", 4096, 100000, 256, "recsys"))
    return rows


def llm_shapes_test3(rng):
    rows = []
    for tokens in (4096,):
        rows += [
            (f"yi34b_qkv_t{tokens}", tokens, 7168 + 2 * 8 * 128, 7168, "llm"),
            (f"yi34b_gateup_t{tokens}", tokens, 2 * 20480, 7168, "llm"),
            (f"yi34b_down_t{tokens}", tokens, 7168, 20480, "llm"),
        ]
    rows += [
        ("yi34b_lmhead_fwd_t2048", 2048, 64000, 7168, "llm"),
        ("internlm2_20b_qkv_t2048", 2048, 6144 + 2 * 8 * 128, 6144, "llm"),
        ("internlm2_20b_o_t2048", 2048, 6144, 6144, "llm"),
        ("internlm2_20b_down_t2048", 2048, 6144, 16384, "llm"),
        ("internlm2_20b_gateup_t32", 32, 2 * 16384, 6144, "llm"),
        ("stablelm2_qkv_t16384", 16384, 3 * 2048, 2048, "llm"),
        ("stablelm2_gateup_t16384", 16384, 2 * 5632, 2048, "llm"),
        ("stablelm2_down_t16384", 16384, 2048, 5632, "llm"),
        ("stablelm2_down_wgrad_t16384", 2048, 5632, 16384, "llm"),
        ("stablelm2_lmhead_fwd_t4096", 4096, 100352, 2048, "llm"),
        ("bloom7b1_mlp_up_t4096", 4096, 4 * 4096, 4096, "llm"),
        ("bloom7b1_lmhead_fwd_t1024", 1024, 250880, 4096, "llm"),
    ]
    return rows


def moe_shapes_test3(rng):
    rows = []
    for i in range(3):
        t = expert_tokens(rng, 8192, 8, 2)
        rows += [
            (f"mixtral8x22b_expert_gateup_{i}", t, 2 * 16384, 6144, "moe"),
            (f"mixtral8x22b_expert_down_{i}", t, 6144, 16384, "moe"),
        ]
    for i in range(3):
        t = expert_tokens(rng, 8192, 16, 2)
        rows += [
            (f"phi35moe_expert_gateup_{i}", t, 2 * 6400, 4096, "moe"),
            (f"phi35moe_expert_down_{i}", t, 4096, 6400, "moe"),
        ]
    for i in range(3):
        t = expert_tokens(rng, 8192, 64, 8)
        rows += [
            (f"qwen2moe57b_expert_gateup_{i}", t, 2 * 2560, 3584, "moe"),
            (f"qwen2moe57b_expert_down_{i}", t, 3584, 2560, "moe"),
        ]
    rows.append(("qwen2moe57b_shared_gateup_t4096", 4096, 2 * 20480, 3584, "moe"))
    return rows


def vision_shapes_test3(rng):
    rows = []
    # ViT-B/16 training at batch 64 (64 x 197 = 12608 tokens) and ViT-H/14 at batch 12
    # (12 x 257 = 3084 tokens: misaligned M; its weight gradients have K = 3084).
    rows += training_triplet("vitb16_mlp1_b64", 64 * 197, 768, 3072, "vision")
    rows.append(("vitb16_qkv_fwd_b64", 64 * 197, 3 * 768, 768, "vision"))
    rows += training_triplet("vith14_mlp1_b12", 12 * 257, 1280, 5120, "vision")
    rows += training_triplet("vith14_mlp2_b12", 12 * 257, 5120, 1280, "vision")
    # MLP-Mixer-B/16 at batch 128: token mixing runs over the 196 patches (rows = batch x
    # channels), channel mixing over the 768 channels (rows = batch x patches).
    rows += [
        ("mixerb16_token_mlp1_fwd", 128 * 768, 384, 196, "vision"),
        ("mixerb16_token_mlp2_fwd", 128 * 768, 196, 384, "vision"),
        ("mixerb16_channel_mlp1_fwd", 128 * 196, 3072, 768, "vision"),
        ("mixerb16_channel_mlp1_wgrad", 768, 3072, 128 * 196, "vision"),
    ]
    return rows


def recsys_shapes_test3(rng):
    rows = []
    # SASRec: batch 128 x sequence 200, hidden 50 (K = 50 and N = 50: 100-byte rows).
    rows += training_triplet("sasrec_ffn_b128", 128 * 200, 50, 50, "recsys")
    # Wukong-style: the Linear Compress Block (64 -> 32 embeddings, rows = batch 8192 x d 128)
    # and the FMB MLP (flattened 64 x 32 -> 1024) at batch 8192.
    rows += [
        ("wukong_lcb_fwd_b8192", 8192 * 128, 32, 64, "recsys"),
        ("wukong_lcb_wgrad_b8192", 64, 32, 8192 * 128, "recsys"),
    ]
    rows += training_triplet("wukong_fmb_mlp_b8192", 8192, 64 * 32, 1024, "recsys")
    # DHEN-style ensemble layer at batch 32768: 40 embeddings of 96 -> 1536, then 1536 -> 768.
    rows += training_triplet("dhen_ens_b32768", 32768, 40 * 96, 1536, "recsys")
    rows += training_triplet("dhen_proj_b32768", 32768, 1536, 768, "recsys")
    return rows


def llm_shapes_test4(rng):
    rows = [
        ("gemma2_9b_qkv_t4096", 4096, 4096 + 2 * 8 * 256, 3584, "llm"),
        ("gemma2_9b_o_t4096", 4096, 3584, 16 * 256, "llm"),
        ("gemma2_9b_down_t4096", 4096, 3584, 14336, "llm"),
        ("gemma2_9b_gateup_t512", 512, 2 * 14336, 3584, "llm"),
        ("qwen25_14b_qkv_t8192", 8192, 5120 + 2 * 8 * 128, 5120, "llm"),
        ("qwen25_14b_down_t2048", 2048, 5120, 13824, "llm"),
        ("qwen25_14b_o_wgrad_t8192", 5120, 5120, 8192, "llm"),
        ("qwen25_14b_lmhead_fwd_t1024", 1024, 152064, 5120, "llm"),
        ("commandr_qkv_t2048", 2048, 3 * 8192, 8192, "llm"),
        ("commandr_down_t1024", 1024, 8192, 22528, "llm"),
        ("commandr_gateup_t64", 64, 2 * 22528, 8192, "llm"),
        ("gptj6b_mlp_up_t2048", 2048, 16384, 4096, "llm"),
        ("gptj6b_mlp_down_t2048", 2048, 4096, 16384, "llm"),
        ("gptj6b_lmhead_dgrad_t2048", 2048, 4096, 50400, "llm"),
        ("flant5xl_wi_fwd_t8192", 8192, 2 * 5120, 2048, "llm"),
        ("flant5xl_wo_fwd_t8192", 8192, 2048, 5120, "llm"),
        ("flant5xl_wo_wgrad_t8192", 5120, 2048, 8192, "llm"),
    ]
    return rows


def moe_shapes_test4(rng):
    rows = []
    for i in range(1):
        t = expert_tokens(rng, 4096, 8, 2)
        rows += [
            (f"grok1_expert_gateup_{i}", t, 2 * 32768, 6144, "moe"),
            (f"grok1_expert_down_{i}", t, 6144, 32768, "moe"),
        ]
    for i in range(2):
        t = expert_tokens(rng, 16384, 128, 2)
        rows += [
            (f"arctic_expert_gateup_{i}", t, 2 * 4864, 7168, "moe"),
            (f"arctic_expert_down_{i}", t, 7168, 4864, "moe"),
        ]
    rows.append(("arctic_dense_gateup_t4096", 4096, 2 * 4864, 7168, "moe"))
    for i in range(2):
        t = expert_tokens(rng, 8192, 40, 8)
        rows += [
            (f"granite3moe_expert_gateup_{i}", t, 2 * 512, 1536, "moe"),
            (f"granite3moe_expert_down_{i}", t, 1536, 512, "moe"),
        ]
    return rows


def speech_vision_shapes_test4(rng):
    rows = []
    # Whisper-large-v3 encoder at batch 5 (5 x 1500 = 7500 tokens: misaligned M and wgrad K).
    rows += training_triplet("whisperl3_enc_fc1_b5", 5 * 1500, 1280, 5120, "speech")
    # Whisper-small encoder at batch 16 (24000 tokens).
    rows += training_triplet("whispers_enc_fc2_b16", 16 * 1500, 3072, 768, "speech")
    # wav2vec 2.0 large, 15 s clips at batch 12 (8988 frames).
    rows += training_triplet("w2v2l_ffn1_b12", 12 * 749, 1024, 4096, "speech")
    # CLIP ViT-L/14: image tower at batch 32 (8224 tokens), text tower at batch 50 (3850 tokens).
    rows += [
        ("clipl14_vis_mlp1_fwd_b32", 32 * 257, 4096, 1024, "vision"),
        ("clipl14_vis_mlp1_wgrad_b32", 1024, 4096, 32 * 257, "vision"),
    ]
    rows += [
        ("clipl14_txt_mlp1_fwd_b50", 50 * 77, 3072, 768, "vision"),
        ("clipl14_txt_mlp1_wgrad_b50", 768, 3072, 50 * 77, "vision"),
    ]
    # Swin-B at batch 32: stage 1 (128 channels, 3136 tokens per image), stage 3 (512, 196).
    rows += [
        ("swinb_s1_mlp1_fwd_b32", 32 * 3136, 4 * 128, 128, "vision"),
        ("swinb_s1_mlp2_fwd_b32", 32 * 3136, 128, 4 * 128, "vision"),
        ("swinb_s3_mlp1_fwd_b32", 32 * 196, 4 * 512, 512, "vision"),
        ("swinb_s3_mlp1_wgrad_b32", 512, 4 * 512, 32 * 196, "vision"),
    ]
    return rows


def recsys_shapes_test4(rng):
    rows = []
    # DLRM layer widths as in the dev suite, at batches no earlier suite uses.
    rows += training_triplet("dlrm_b32768_480x1024", 32768, 480, 1024, "dlrm")
    rows += [
        ("dlrm_b16384_bot_fwd_13x512", 16384, 512, 13, "dlrm"),
        ("dcn_down_b32768", 32768, 512, 3456, "dlrm"),
        ("dcn_up_b16384", 16384, 3456, 512, "dlrm"),
    ]
    # The last, partial batch of a Criteo Kaggle epoch at batch 65536: 30953 rows.
    tail = 45840617 % 65536
    rows += training_triplet(f"dlrm_tail{tail}_1024x1024", tail, 1024, 1024, "dlrm")
    rows += [
        (f"dcn_down_tail{tail}", tail, 512, 3456, "dlrm"),
        (f"dcn_down_wgrad_tail{tail}", 3456, 512, tail, "dlrm"),
    ]
    return rows


def module_suite(module, suite, excluded):
    """A suite whose sources live in their own module (gemm_test_suite5.py on): its four source
    functions, seed, random count and misaligned share."""
    return ((getattr(module, f"llm_shapes_{suite}"),
             lambda rng: getattr(module, f"moe_shapes_{suite}")(rng, expert_tokens),
             lambda rng: getattr(module, f"vision_speech_shapes_{suite}")(rng, training_triplet),
             lambda rng: getattr(module, f"recsys_shapes_{suite}")(rng, training_triplet)),
            excluded, module.DEFAULT_SEED, module.RANDOM_COUNT, module.MISALIGNED_SHARE)


SUITES = {
    # name: (source functions, excluded suites, default seed, random shapes, misaligned share)
    "test": ((llm_shapes, moe_shapes, recsys_shapes), EXCLUDED_SUITES, 20261201, RANDOM_SHAPES,
             MISALIGNED_SHARE),
    "test2": ((llm_shapes_test2, moe_shapes_test2, recsys_shapes_test2), EXCLUDED_SUITES_TEST2,
              20261202, 30, 0.40),
    "test3": ((llm_shapes_test3, moe_shapes_test3, vision_shapes_test3, recsys_shapes_test3),
              EXCLUDED_SUITES_TEST3, 20261203, 20, 0.30),
    "test4": ((llm_shapes_test4, moe_shapes_test4, speech_vision_shapes_test4, recsys_shapes_test4),
              EXCLUDED_SUITES_TEST4, 20261204, 20, 0.30),
    "test5": module_suite(gemm_test_suite5, "test5", EXCLUDED_SUITES_TEST5),
    "test6": module_suite(gemm_test_suite6, "test6", EXCLUDED_SUITES_TEST6),
    "test7": module_suite(gemm_test_suite7, "test7", EXCLUDED_SUITES_TEST7),
    "test8": module_suite(gemm_test_suite8, "test8", EXCLUDED_SUITES_TEST8),
    "test9": module_suite(gemm_test_suite9, "test9", EXCLUDED_SUITES_TEST9),
    "test10": module_suite(gemm_test_suite10, "test10", EXCLUDED_SUITES_TEST10),
    "test11": module_suite(gemm_test_suite11, "test11", EXCLUDED_SUITES_TEST11),
    "test12": module_suite(gemm_test_suite12, "test12", EXCLUDED_SUITES_TEST12),
    "test13": module_suite(gemm_test_suite13, "test13", EXCLUDED_SUITES_TEST13),
    "test14": module_suite(gemm_test_suite14, "test14", EXCLUDED_SUITES_TEST14),
}


def random_shapes(rng, count, misaligned_wanted, prefix):
    """Log-uniform m, n, k in [16, 32768]; the first `misaligned_wanted` are forced misaligned
    (K odd), the rest forced TMA-aligned (M and K multiples of 8)."""
    rows = []
    low, high = math.log(16), math.log(32768)
    for i in range(count):
        m, n, k = (int(round(math.exp(rng.uniform(low, high)))) for _ in range(3))
        if i < misaligned_wanted:
            if not is_misaligned(m, k):
                k += 1 if k % 2 == 0 else 0
                if not is_misaligned(m, k):
                    k += 1
        else:
            m, k = max(8, m - m % 8), max(8, k - k % 8)
        rows.append((f"{prefix}_{i}", m, n, k, "random"))
    return rows


def read_excluded(root, suites):
    sizes = set()
    for rel in suites:
        path = root / rel
        if not path.exists():
            continue
        with open(path) as f:
            lines = [line for line in f if line.strip() and not line.startswith("#")]
        for row in csv.DictReader(lines):
            sizes.add((int(row["m"]), int(row["n"]), int(row["k"])))
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=sorted(SUITES), default="test")
    parser.add_argument("--seed", type=int, default=None, help="default: the suite's own seed")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sources, excluded_suites, default_seed, random_count, misaligned_share = SUITES[args.suite]
    if args.seed is None:
        args.seed = default_seed
    rng = random.Random(args.seed)

    rows = [row for source in sources for row in source(rng)]
    excluded = read_excluded(args.root, excluded_suites)
    rows = [r for r in rows if (r[1], r[2], r[3]) not in excluded]
    misaligned = sum(is_misaligned(r[1], r[3]) for r in rows)
    total = len(rows) + random_count
    wanted = max(0, min(random_count, math.ceil(misaligned_share * total) - misaligned))
    for r in random_shapes(rng, random_count, wanted, "rand_" + args.suite):
        if (r[1], r[2], r[3]) not in excluded:
            rows.append(r)
    seen, unique = set(), []
    for r in rows:
        if (r[1], r[2], r[3]) not in seen:
            seen.add((r[1], r[2], r[3]))
            unique.append(r)
    misaligned = sum(is_misaligned(r[1], r[3]) for r in unique)

    out = sys.stdout
    out.write(
        "# GEMM TEST suite (scripts/gemm_test_suite.py%s --seed %d): scored once, never iterated on.\n"
        "# C[m,n] = A[m,k] * B[k,n], bf16 in/out, fp32 accumulate. %d shapes, %d misaligned "
        "(lda/ldc not 16-byte aligned).\n" % ("" if args.suite == "test" else " --suite " + args.suite,
                                               args.seed, len(unique), misaligned))
    out.write("name,m,n,k,family\n")
    for name, m, n, k, family in unique:
        out.write(f"{name},{m},{n},{k},{family}\n")


if __name__ == "__main__":
    main()
