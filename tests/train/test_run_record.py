"""`train.run_record`: the command and machine a `python -m train.…` measurement writes beside its figures."""

from __future__ import annotations

import os
import sys

from gretriever_neo4j.train.run_record import run_record


def test_the_command_is_the_module_and_the_arguments_main_was_given(monkeypatch):
    record = run_record("walk_encoder", ["DATA/a.npz", "--candidates", "16"])
    assert record["command"] == "python -m train.walk_encoder DATA/a.npz --candidates 16"
    assert record["machine"]["cpus"] == os.cpu_count() and record["machine"]["platform"]
    monkeypatch.setattr(sys, "argv", ["/somewhere/calibration.py", "measure", "CAL/g.npz"])
    assert run_record("calibration", None)["command"] == "python -m train.calibration measure CAL/g.npz"
