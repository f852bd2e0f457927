import os

# No test may reach a model hub; fail fast instead of retrying for half a minute.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

# The toy models are tiny: one thread is much faster than two contending threads on a busy 2-core machine.
torch.set_num_threads(1)
