"""Question embedding: PyTorch (sentence-transformers) vs ONNX Runtime (`onnx_encoder`), one question at a time as
retrieval embeds them, alternating so both see the same machine; and their agreement (cosine).

    python bench/query_embedding.py [--questions 200] [--out bench/results/query_embedding.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, command

sys.path.insert(0, str(REPO))
SHARED = REPO.parent / "shared" / "data" / "metaqa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "query_embedding.json")
    args = parser.parse_args()
    from gretriever_neo4j.embedding.embedder import Embedder

    questions = []
    for hop in (1, 2, 3):
        lines = (SHARED / f"qa_dev_{hop}hop.txt").read_text().splitlines()[: args.questions // 3 + 1]
        questions += [re.sub(r"[\[\]]", "", line.split("\t")[0]) for line in lines]
    questions = questions[: args.questions]
    embedder = Embedder()
    model, onnx = embedder._model, embedder._query_encoder()
    if onnx is None:
        raise SystemExit("no ONNX encoder (is onnxruntime installed?)")
    torch_ms, onnx_ms, cosines = [], [], []
    for question in questions:
        started = time.perf_counter()
        a = model.encode([question], convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)[0]
        torch_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        b = onnx.encode([question])[0]
        onnx_ms.append((time.perf_counter() - started) * 1000)
        cosines.append(float(a @ b))
    result = {
        "command": command(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "questions": len(questions),
        "torch_p50_ms": float(np.median(torch_ms)), "torch_p95_ms": float(np.percentile(torch_ms, 95)),
        "onnx_p50_ms": float(np.median(onnx_ms)), "onnx_p95_ms": float(np.percentile(onnx_ms, 95)),
        "speedup_p50": float(np.median(torch_ms) / np.median(onnx_ms)),
        "min_cosine": float(min(cosines)),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    for key, value in result.items():
        print(f"{key:<16} {value}")


if __name__ == "__main__":
    main()
