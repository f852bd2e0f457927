import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gretriever_neo4j.model.checkpoint import read_checkpoint
from gretriever_neo4j.train.trainer import train

from kill_worker import config, samples
from model_toys import toy_model

WORKER = Path(__file__).resolve().parent / "kill_worker.py"


@pytest.mark.slow
def test_a_run_killed_mid_epoch_resumes_to_the_same_next_epoch(tmp_path):
    straight_model = toy_model("g-retriever", seed=3)
    straight = train(straight_model, samples(), samples()[:4], config(), tmp_path / "straight")

    # Training reads each of the 8 graphs once per epoch (batches of 2): read 11 is in the second epoch's 2nd batch.
    run = subprocess.run([sys.executable, str(WORKER), str(tmp_path / "killed"), "11"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == -9, run.stderr[-2000:]
    assert read_checkpoint(tmp_path / "killed" / "last").epoch == 1  # the first epoch was saved, the second not

    resumed_model = toy_model("g-retriever", seed=99)  # other initial weights: everything must come from `last`
    resumed = train(resumed_model, samples(), samples()[:4], config(resume=True), tmp_path / "killed")
    assert resumed.resumed_from == tmp_path / "killed" / "last"
    assert [e.epoch for e in resumed.epochs] == [0, 1, 2]
    for mine, theirs in zip(resumed.epochs, straight.epochs):
        assert mine.train_loss == theirs.train_loss
        assert mine.val_loss == theirs.val_loss
        assert mine.val_accuracy == theirs.val_accuracy
        assert mine.val_predicted == theirs.val_predicted
    for (name, a), (_, b) in zip(straight_model.module_state_dict().items(), resumed_model.module_state_dict().items()):
        assert torch.equal(a, b), name
    saved = json.loads((tmp_path / "killed" / "history.json").read_text())
    assert [e["val_accuracy"] for e in saved["epochs"]] == [e.val_accuracy for e in straight.epochs]
