"""Numpy's BLAS on one thread, in the processes that answer questions (the CLI's and the service's entry points).

A question's work is a handful of small products (one question against a graph's vectors) between ONNX Runtime's
and torch's own thread pools. OpenBLAS's second thread then only spins against theirs on a small machine, and
served retrieval gets slower, not faster. A server runs several questions at once, each on its own thread, so one
BLAS thread per product loses nothing there either; a product too large for one core is split over threads by
`retrieval.seeds`. A user's OPENBLAS_NUM_THREADS is left as set.
"""

from __future__ import annotations

import os
import sys

_VARIABLE = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    if _VARIABLE in os.environ:
        return
    if "numpy" not in sys.modules:  # numpy reads the variable when it loads its OpenBLAS
        os.environ[_VARIABLE] = "1"
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    os.environ[_VARIABLE] = "1"  # for `blas_on_one_thread`, and child processes


def blas_on_one_thread() -> bool:
    """Whether numpy's BLAS runs one thread here, so that a large product may be split over threads of ours
    (`retrieval.seeds`) without running two BLAS threads per core."""
    return os.environ.get(_VARIABLE) == "1"
