"""The platform's training entrypoint (trainer/train.py) and how team pods get it.

Every team namespace holds it in a ConfigMap that the reference workloads mount read-only at /app, so they run on
any image with Python (the default PyTorch image included) without a custom build; trainer/Dockerfile bakes the
same file into an image for teams that prefer that. Its non-retriable exit code is the reference Job's
podFailurePolicy code.
"""

from __future__ import annotations

from pathlib import Path

TRAINER_SOURCE_FILE = Path(__file__).resolve().parents[2] / "trainer" / "train.py"
TRAINER_CONFIG_MAP = "aks-mlops-trainer"
TRAINER_DIR = "/app"
TRAINER_FILE = "train.py"
TRAINER_PATH = f"{TRAINER_DIR}/{TRAINER_FILE}"
# train.py's EXIT_BAD_ARGUMENTS: arguments no retry can fix (tests/unit/test_trainer_entrypoint.py keeps them equal).
NON_RETRIABLE_EXIT_CODE = 42


def trainer_source() -> str:
    return TRAINER_SOURCE_FILE.read_text()
