#!/usr/bin/env python3
"""TorchRec's EmbeddingShardingPlanner beside `parity plan` on the dlrm-v2 tables, 8 H200-like GPUs.

Installs torch, fbgemm-gpu-cpu and torchrec from PyPI into build/torchrec-venv when they are
missing (and re-runs itself there), plans the 26 MLPerf DLRMv2 tables (rows, dim 128, pooling
factors = ids per sample, fused row-wise Adagrad) for 8 GPUs with TorchRec's planner on a
Topology built from data/hardware/h200.json (HBM capacity and bandwidth, NVLink per-GPU
bandwidth, NIC), runs `parity plan` for the same model, batch and GPUs, and prints both: each
table's sharding and ranks, and each rank's memory estimate. With --out DIR it writes
comparison.json there.

  scripts/torchrec_plan_compare.py [--parity build/cpu/bin/parity] [--batch 65536] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "build", "torchrec-venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
# fbgemm-gpu-cpu 1.9 is built against torch 2.14 (with 2.15 its library fails to load).
PACKAGES = ["torch==2.14.*", "fbgemm-gpu-cpu==1.9.*", "torchrec==1.9.*"]

# MLPerf DLRMv2 (the trainer's dlrm-v2 preset, src/model/spec.cpp): rows and ids per sample.
ROWS = [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10,
        2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36]
HOTS = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
DIM = 128


def have_torchrec():
    try:
        import torchrec  # noqa: F401
        return True
    except Exception:  # ImportError, or a broken torch install
        return False


def ensure_venv():
    """Re-executes this script in build/torchrec-venv, creating it when needed."""
    if have_torchrec():
        return
    if os.path.abspath(sys.prefix) == os.path.abspath(VENV):
        sys.exit("torchrec_plan_compare: torchrec does not import in %s; remove it and re-run" % VENV)
    if not os.path.exists(VENV_PYTHON):
        start = time.time()
        print("installing %s into %s (PyPI; several GB) ..." % (", ".join(PACKAGES), VENV), flush=True)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        pip = [VENV_PYTHON, "-m", "pip"]
        subprocess.check_call(pip + ["install", "-q"] + PACKAGES)
        # torchrec depends on the CUDA fbgemm-gpu, which overwrites the CPU build's files and needs
        # the NVIDIA driver to load: keep the CPU build only.
        subprocess.check_call(pip + ["uninstall", "-y", "-q", "fbgemm-gpu"])
        subprocess.check_call(pip + ["install", "-q", "--force-reinstall", "--no-deps", PACKAGES[1]])
        print("installed in %.0f s" % (time.time() - start), flush=True)
    os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)


def hardware(name):
    with open(os.path.join(ROOT, "data", "hardware", name + ".json")) as f:
        spec = json.load(f)
    return {key: spec[key]["value"] for key in
            ("hbm_capacity_gb", "hbm_bandwidth_tbps", "scale_up_per_gpu_gbps", "scale_out_nic_gbps")}


def parity_plan(parity, gpus, batch, out_dir):
    command = [parity, "plan", "--model", "dlrm-v2", "--hw", "h200", "--gpus", str(gpus), "--batch", str(batch),
               "--precision", "bf16", "--checkpointing", "none", "--out", out_dir]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "plan.json")) as f:
        plan = json.load(f)
    tables = {}
    for table in plan["tables"]:
        ranks = sorted({shard["rank"] for shard in table["shards"]})
        tables[table["name"]] = {"sharding": table["sharding"], "ranks": ranks, "shards": len(table["shards"])}
    ranks = []
    for rank in plan["prediction"]["ranks"]:
        memory = rank["memory"]
        ranks.append({"embedding_bytes": memory["embedding_weights"] + memory["embedding_optimizer"],
                      "total_bytes": sum(memory.values())})
    return {"command": " ".join(command[1:]), "tables": tables, "ranks": ranks,
            "step_ms": plan["prediction"]["step_us"] / 1e3}


def topology_kwargs(Topology, hw, gpus, local_batch):
    """Topology arguments by name; TorchRec's bandwidths are bytes per millisecond."""
    import inspect
    gb = 1e9
    wanted = {
        "world_size": gpus,
        "compute_device": "cuda",
        "local_world_size": min(gpus, 8),
        "hbm_cap": int(hw["hbm_capacity_gb"] * gb),
        "ddr_cap": int(256 * gb),  # host memory per GPU (UVM); unused with fused HBM kernels
        "hbm_mem_bw": hw["hbm_bandwidth_tbps"] * 1e12 / 1e3,
        "intra_host_bw": hw["scale_up_per_gpu_gbps"] * gb / 1e3,
        "inter_host_bw": hw["scale_out_nic_gbps"] * gb / 1e3,
        "batch_size": local_batch,
    }
    accepted = inspect.signature(Topology.__init__).parameters
    return {key: value for key, value in wanted.items() if key in accepted}


def torchrec_plan(hw, gpus, local_batch):
    import torch
    from fbgemm_gpu.split_embedding_configs import EmbOptimType
    from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
    from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
    from torchrec.distributed.planner.types import ParameterConstraints
    from torchrec.modules.embedding_configs import EmbeddingBagConfig
    from torchrec.modules.embedding_modules import EmbeddingBagCollection

    names = ["C%d" % (t + 1) for t in range(len(ROWS))]
    configs = [EmbeddingBagConfig(name=n, embedding_dim=DIM, num_embeddings=r, feature_names=[n])
               for n, r in zip(names, ROWS)]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sparse = EmbeddingBagCollection(tables=configs, device=torch.device("meta"))

    # Fused kernels keep every table in HBM (no UVM cache), like Parity's trainer.
    constraints = {n: ParameterConstraints(pooling_factors=[float(h)], compute_kernels=["fused"])
                   for n, h in zip(names, HOTS)}
    topology = Topology(**topology_kwargs(Topology, hw, gpus, local_batch))
    planner = EmbeddingShardingPlanner(topology=topology, batch_size=local_batch, constraints=constraints)
    sharder = EmbeddingBagCollectionSharder(fused_params={"optimizer": EmbOptimType.EXACT_ROWWISE_ADAGRAD,
                                                          "learning_rate": 0.005})
    start = time.time()
    plan = planner.plan(Model(), [sharder])
    seconds = time.time() - start
    tables = {}
    for _module, shardings in plan.plan.items():
        for name, sharding in shardings.items():
            tables[name] = {"sharding": sharding.sharding_type, "ranks": sorted(set(sharding.ranks or [])),
                            "kernel": sharding.compute_kernel}
    # Per-rank storage estimates of the chosen options (HBM bytes: weights, optimiser state, and
    # TorchRec's I/O and kernel buffer estimate per shard).
    ranks = [0.0] * gpus
    best = getattr(planner, "_best_plan", None) or []
    for option in best:
        for shard in option.shards:
            if shard.rank is not None and shard.storage is not None:
                ranks[shard.rank] += shard.storage.hbm
    perf_ms = [0.0] * gpus
    for option in best:
        for shard in option.shards:
            if shard.rank is not None and shard.perf is not None:
                perf_ms[shard.rank] += getattr(shard.perf, "total", 0.0)
    import torchrec
    return {"version": torchrec.__version__, "torch": torch.__version__, "plan_seconds": seconds,
            "tables": tables, "rank_hbm_bytes": ranks, "rank_perf_ms": perf_ms,
            "topology": topology_kwargs(Topology, hw, gpus, local_batch)}


def print_side_by_side(parity, torchrec, gpus):
    print("table  rows        ids | parity: sharding (ranks)          | torchrec: sharding (ranks)")
    for t, name in enumerate("C%d" % (i + 1) for i in range(len(ROWS))):
        p = parity["tables"][name]
        r = torchrec["tables"].get(name, {"sharding": "-", "ranks": []})
        print("%-6s %-11d %3d | %-14s %-18s | %-14s %s" % (
            name, ROWS[t], HOTS[t], p["sharding"], p["ranks"] if len(p["ranks"]) < gpus else "all",
            r["sharding"], r["ranks"] if len(r["ranks"]) < gpus else "all"))
    print("\nrank | parity embeddings GB | parity total GB | torchrec HBM estimate GB")
    for rank in range(gpus):
        print("%4d | %20.2f | %15.2f | %24.2f" % (rank, parity["ranks"][rank]["embedding_bytes"] / 1e9,
                                                  parity["ranks"][rank]["total_bytes"] / 1e9,
                                                  torchrec["rank_hbm_bytes"][rank] / 1e9))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "cpu", "bin", "parity"))
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--batch", type=int, default=65536, help="global batch")
    parser.add_argument("--out", default="", help="folder for comparison.json")
    args = parser.parse_args()
    ensure_venv()
    hw = hardware("h200")
    local_batch = args.batch // args.gpus
    with tempfile.TemporaryDirectory() as tmp:
        parity = parity_plan(args.parity, args.gpus, args.batch, tmp)
    torchrec = torchrec_plan(hw, args.gpus, local_batch)
    print("dlrm-v2 tables on %d x h200, global batch %d (%d per GPU); TorchRec %s (torch %s) planned in %.2f s\n"
          % (args.gpus, args.batch, local_batch, torchrec["version"], torchrec["torch"], torchrec["plan_seconds"]))
    print_side_by_side(parity, torchrec, args.gpus)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "comparison.json"), "w") as f:
            json.dump({"model": "dlrm-v2", "hardware": "h200", "gpus": args.gpus, "global_batch": args.batch,
                       "parity": parity, "torchrec": torchrec}, f, indent=2)
            f.write("\n")
        print("\nwrote %s" % os.path.join(args.out, "comparison.json"))


if __name__ == "__main__":
    main()
