"""How a bad configuration stops the program: one `pulumi.RunError` naming the key, unknown keys refused, and
stack files read as the Pulumi CLI reads them (YAML 1.2 booleans; a key without a value handed over as "").
The rest of how stack files are read is in tests/program/test_stack_files.py."""

from __future__ import annotations

import pulumi
import pytest
import yaml

from components.base.stack import StackConfigError, load_platform
from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.config.node import EMPTY_IN_STACK_FILE, ConfigNode
from offline.stacks import PROJECT_DIR, StackFileLoader, load_stack_config, stack_settings_raw
from tests.support.config import dev_raw, load_error, prod_raw


def test_the_settings_layer_raises_a_plain_value_error_naming_the_key() -> None:
    # No Pulumi type: the settings layer (and the workload checker on top of it) runs without the Pulumi SDK.
    error = load_error(dev_raw(clusterTier="Gold"), "clusterTier")
    assert type(error) is ConfigError
    assert isinstance(error, ValueError) and not isinstance(error, pulumi.RunError)
    assert str(error).startswith("aks-mlops:clusterTier: 'Gold' is not allowed")
    assert "\n" not in str(error)


def test_the_program_raises_it_as_a_run_error_from_the_engines_config() -> None:
    """The Python language host prints only the message of a pulumi.RunError, a traceback for anything else
    (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec): the program's first step re-raises the settings
    layer's error as one, with the same key path, value and message, from the config the engine handed over."""
    raw = {**stack_settings_raw(load_stack_config("dev")), "clusterTier": "Gold"}
    pulumi.runtime.set_all_config({f"aks-mlops:{key}": value for key, value in raw.items()})
    try:
        with pytest.raises(StackConfigError) as excinfo:
            load_platform()
    finally:
        pulumi.runtime.set_all_config({})
    error = excinfo.value
    assert isinstance(error, pulumi.RunError) and isinstance(error, ConfigError)
    assert (error.path, error.value) == ("clusterTier", "Gold")
    assert str(error) == str(load_error(raw, "clusterTier"))


@pytest.mark.parametrize(
    ("key", "meant"),
    [("gpuSoftwre", "gpuSoftware"), ("upgradeChanel", "upgradeChannel"), ("logRetentionDay", "logRetentionDays")],
)
def test_an_unknown_key_of_the_project_is_refused_with_did_you_mean(key: str, meant: str) -> None:
    # Pulumi itself ignores them: a misspelt gpuSoftware would switch prod to the device plugin with exit 0.
    raw = {**stack_settings_raw(load_stack_config("prod")), key: "gpu-operator"}
    with pytest.raises(ConfigError) as excinfo:
        load_settings(raw)
    assert excinfo.value.path == key
    assert f"(did you mean '{meant}'?)" in excinfo.value.problem
    assert "is not a setting of this project" in excinfo.value.problem


def test_a_key_nobody_could_have_meant_gets_no_hint() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_settings({**prod_raw(), "zzz": "1"})
    assert excinfo.value.problem == "is not a setting of this project; see docs/configuration.md"


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "Yes", "NO"])
def test_yaml_1_1_booleans_stay_strings_as_the_cli_reads_them(word: str) -> None:
    assert yaml.load(f"a: {word}", Loader=StackFileLoader) == {"a": word}


@pytest.mark.parametrize(("text", "value"), [("true", True), ("false", False), ("True", True), ("FALSE", False)])
def test_yaml_1_2_booleans_are_booleans(text: str, value: bool) -> None:
    assert yaml.load(f"a: {text}", Loader=StackFileLoader) == {"a": value}


@pytest.mark.parametrize("word", ["yes", "no"])
def test_a_yaml_1_1_boolean_in_a_stack_file_is_refused_naming_the_key(word: str, tmp_path) -> None:
    stack = load_stack_config("dev")
    text = yaml.safe_dump({"config": {**stack, "aks-mlops:grafanaEnabled": "PLACEHOLDER"}}).replace("PLACEHOLDER", word)
    (tmp_path / "Pulumi.trial.yaml").write_text(text)
    config = load_stack_config("trial", tmp_path)
    assert config["aks-mlops:grafanaEnabled"] == word
    error = load_error(stack_settings_raw(config), "grafanaEnabled")
    assert error.problem == "must be true or false"


@pytest.mark.parametrize(("key", "read"), [("tags", "string_map"), ("alertEmails", "items"), ("kueue", "fields")])
def test_a_key_without_a_value_is_empty_not_a_wrong_type(key: str, read: str) -> None:
    """`tags:` or `tags: null` in a stack file: the CLI hands the program "" (Pulumi's loaders.go warns "No value for
    configuration key ... treated as an empty string"); the error says that, not "must be an object"."""
    node = ConfigNode.top_level(key, "")
    with pytest.raises(ConfigError) as excinfo:
        getattr(node, read)(*(("a",) if read == "fields" else ()))
    assert str(excinfo.value) == f"aks-mlops:{key}: '' {EMPTY_IN_STACK_FILE}"
    assert "is empty: the stack file gives the key no value (or null)" in EMPTY_IN_STACK_FILE


def test_a_null_in_a_stack_file_reaches_the_settings_as_the_cli_hands_it_over(tmp_path) -> None:
    text = (
        (PROJECT_DIR / "Pulumi.dev.yaml")
        .read_text()
        .replace("  aks-mlops:tags:\n    cost-center: ml-platform-dev\n", "  aks-mlops:tags: null\n")
    )
    (tmp_path / "Pulumi.trial.yaml").write_text(text)
    raw = stack_settings_raw(load_stack_config("trial", tmp_path))
    assert raw["tags"] == ""
    assert load_error(raw, "tags").problem == EMPTY_IN_STACK_FILE
