"""Which policy config a stack is checked with, as a file the Pulumi CLI's `--policy-pack-config` takes: the stack's
own `policies/config/<stack>.json`, else its environment's defaults (`policies/config/defaults/prod.json` for prod,
`non-prod.json` for any other environment), so a stack added by copying a stack file works without a config of its
own. Pure (PyYAML only, through `offline.stacks`): the offline plan and the workflows' stack matrices
(`offline.stack_matrix`) read the same choice.
"""

from __future__ import annotations

from pathlib import Path

from components.config.errors import PROJECT
from offline.stacks import PROJECT_DIR, load_stack_config

POLICY_DIR = PROJECT_DIR / "policies"
CONFIG_DIR = POLICY_DIR / "config"
DEFAULTS_DIR = CONFIG_DIR / "defaults"
PROD_ENVIRONMENT = "prod"
ENVIRONMENT_KEY = f"{PROJECT}:environment"


def stack_environment(stack: str, project_dir: Path = PROJECT_DIR) -> str | None:
    """The stack's `aks-mlops:environment`, from its stack file."""
    value = load_stack_config(stack, project_dir).get(ENVIRONMENT_KEY)
    return None if value is None else str(value)


def defaults_file(environment: str | None) -> Path:
    """The policy config of a stack of `environment` that has no file of its own."""
    return DEFAULTS_DIR / ("prod.json" if environment == PROD_ENVIRONMENT else "non-prod.json")


def policy_config_file(stack: str, environment: str | None, config_dir: Path = CONFIG_DIR) -> Path:
    """The stack's own config if it has one, else its environment's defaults."""
    own = config_dir / f"{stack}.json"
    return own if own.exists() else defaults_file(environment)
