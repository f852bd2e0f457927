"""Data-parallel training: two CPU processes (gloo) with batch 2 take exactly the steps of one process with
batch 4 — same losses, same weights — and only rank 0 writes checkpoints."""

from __future__ import annotations

import socket

import pytest
import torch
import torch.multiprocessing as mp

from gretriever_neo4j.train.distributed import World, shard

from ddp_worker import run


def test_shard_gives_each_rank_its_slice_of_every_global_batch():
    order = list(range(10))
    assert shard(order, 2, World(0, 1)) == order
    assert shard(order, 2, World(0, 2)) == [0, 1, 4, 5, 8, 9]
    assert shard(order, 2, World(1, 2)) == [2, 3, 6, 7, 0, 1]  # padded by wrapping around: equal batch counts


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_equal_one_with_the_doubled_batch(tmp_path):
    # Prompt tuning: no layer looks across the batch, so the equality is exact up to float sums.
    mp.spawn(run, args=(2, _port(), str(tmp_path), 2, "prompt-tuning"), nprocs=2, join=True)
    run(0, 1, 0, str(tmp_path), 4, "prompt-tuning")
    two, one = torch.load(tmp_path / "result-prompt-tuning-2.pt"), torch.load(tmp_path / "result-prompt-tuning-1.pt")
    assert two["steps"] == one["steps"] == 4
    assert torch.allclose(torch.tensor(two["losses"]), torch.tensor(one["losses"]), rtol=1e-5)
    assert torch.allclose(torch.tensor(two["val"]), torch.tensor(one["val"]), rtol=1e-5)
    for name, weight in one["weights"].items():
        assert torch.allclose(two["weights"][name], weight, atol=1e-6), name
    assert (tmp_path / "ckpt-2" / "best").is_dir() and (tmp_path / "ckpt-2" / "last").is_dir()


@pytest.mark.slow
def test_g_retriever_trains_data_parallel_on_cpu(tmp_path):
    """The graph encoder's batch norm normalises per rank on CPU: close to, not equal to, the doubled batch."""
    mp.spawn(run, args=(2, _port(), str(tmp_path), 2, "g-retriever"), nprocs=2, join=True)
    run(0, 1, 0, str(tmp_path), 4, "g-retriever")
    two, one = torch.load(tmp_path / "result-g-retriever-2.pt"), torch.load(tmp_path / "result-g-retriever-1.pt")
    assert two["steps"] == one["steps"] == 4
    assert two["losses"][-1] < two["losses"][0] and abs(two["losses"][0] - one["losses"][0]) < 0.1
