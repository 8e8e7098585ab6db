"""Stack files read as the Pulumi CLI reads them (go-yaml v3 through Pulumi's config types), not as PyYAML does.

Each case is a copy of the dev stack file with one change, in a project folder of its own, read by
`offline.stacks.load_stack_config` and run through the real entry point (`offline.__main__.main`): duplicate keys are
an error naming the key and both lines, `13:30` is a string (no base 60), an unquoted date reaches the program as the
string Go's `time.Time.String()` makes of it, and a `secure:` value is a secret: the plan hands the program a
placeholder for the settings that may be secret (marked secret, as PULUMI_CONFIG_SECRET_KEYS marks it), never prints
the ciphertext, and refuses a secret anywhere else with one line naming the key. What the go-yaml behaviour rests on
is cited in `offline/stacks.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
import yaml

from components.config.errors import ConfigError
from components.config.loader import load_settings
from offline.__main__ import main
from offline.harness.engine import ProgramRun, run_stack
from offline.stacks import (
    PROJECT_DIR,
    Secret,
    StackFileError,
    StackFileLoader,
    engine_config,
    load_stack_config,
    secret_keys,
    stack_settings_raw,
)

DEV_TEXT = (PROJECT_DIR / "Pulumi.dev.yaml").read_text()
DEV_ALERT_EMAILS = "  aks-mlops:alertEmails:\n    - ml-platform-dev@example.com   # replace with your team's address\n"
CIPHERTEXT = "v1:Zm9vYmFyYmF6cXV4LWNpcGhlcnRleHQtbmV2ZXItcHJpbnRlZA=="
SECRET_DEPLOYER = f"  aks-mlops:deployerObjectId:\n    secure: {CIPHERTEXT}\n"
PLACEHOLDER_GUID = "00000000-0000-0000-0000-000000000000"


def dev_with(change: str | None = None, *, replace: tuple[str, str] | None = None) -> str:
    """The dev stack file with `change` appended to its config, or one line replaced."""
    text = DEV_TEXT
    if replace is not None:
        assert replace[0] in text
        text = text.replace(replace[0], replace[1])
    return text + (change or "")


def project(tmp_path: Path, text: str, stack: str = "dev") -> Path:
    """A project folder (the real program and Pulumi.yaml) whose one stack file is `text`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("__main__.py", "Pulumi.yaml"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(text)
    return tmp_path


def plan(folder: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["dev", "--project-dir", str(folder), "--quiet", *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out


# --- the project's own files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"])
def test_the_projects_files_read_as_before(name: str) -> None:
    """The go-yaml-like loader accepts everything the project's files contain, with the values PyYAML gave them (they
    use no construct the two read differently: dates and clock times are quoted)."""
    text = (PROJECT_DIR / name).read_text()
    assert yaml.load(text, Loader=StackFileLoader) == yaml.safe_load(text)


def test_the_real_stacks_have_no_secrets_and_hand_over_as_before(stack: str) -> None:
    config = load_stack_config(stack)
    assert secret_keys(config) == []
    assert load_settings(stack_settings_raw(config)).environment == stack


# --- duplicate keys -------------------------------------------------------------------------------------------------


def test_a_duplicate_key_is_an_error_naming_the_key_and_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """go-yaml v3 decode.go: "mapping key %#v already defined at line %d"; PyYAML kept the last value, so the plan
    planned northeurope where `pulumi up` refuses the file."""
    text = dev_with(
        replace=(
            "  aks-mlops:location: westeurope\n",
            "  aks-mlops:location: westeurope\n  aks-mlops:location: northeurope\n",
        )
    )
    first = text.splitlines().index("  aks-mlops:location: westeurope") + 1
    folder = project(tmp_path, text)
    message = f'Pulumi.dev.yaml: line {first + 1}: mapping key "aks-mlops:location" already defined at line {first}'
    with pytest.raises(StackFileError) as raised:
        load_stack_config("dev", folder)
    assert str(raised.value) == message
    code, out = plan(folder, capsys)
    assert code == 2
    assert out.splitlines()[-2:] == ["configuration rejected, nothing would be created:", f"  {message}"]


def test_a_duplicate_key_inside_a_value_is_an_error_too(tmp_path: Path) -> None:
    text = dev_with(
        replace=("      maxCount: 2\n      spot: true\n", "      maxCount: 2\n      spot: true\n      maxCount: 4\n")
    )
    first = text.splitlines().index("      maxCount: 2") + 1
    with pytest.raises(StackFileError) as raised:
        load_stack_config("dev", project(tmp_path, text))
    assert str(raised.value) == (
        f'Pulumi.dev.yaml: line {first + 2}: mapping key "maxCount" already defined at line {first}'
    )


# --- scalars: YAML 1.2 core schema as go-yaml v3 resolves it --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # No base 60 (resolve.go: "Base 60 floats ... are purposefully unsupported"); PyYAML: 810, 5400.
        ("13:30", "13:30"),
        ("1:30:00", "1:30:00"),
        # Unquoted timestamps (resolve.go parseTimestamp) reach the program as Go's time.Time.String().
        ("2026-12-24", "2026-12-24 00:00:00 +0000 UTC"),
        ("2026-1-5", "2026-01-05 00:00:00 +0000 UTC"),
        ("2026-12-24T10:30:00Z", "2026-12-24 10:30:00 +0000 UTC"),
        ("2026-12-24T10:30:00.250+02:00", "2026-12-24 10:30:00.25 +0200 +0200"),
        ("2026-12-24 10:30:00", "2026-12-24 10:30:00 +0000 UTC"),
        ("'2026-12-24'", "2026-12-24"),
        ("2026-13-01", "2026-13-01"),
        # Go's ParseInt with base 0 and yamlStyleFloat; a whole float comes back from the CLI's YAML round trip whole.
        ("0o17", 15),
        ("017", 15),
        ("0x1F", 31),
        ("1_000", 1000),
        ("1e3", 1000),
        ("2.0", 2),
        ("1.36", 1.36),
        # YAML 1.2 booleans and nulls only.
        ("yes", "yes"),
        ("True", True),
        ("~", None),
        ("=", "="),
    ],
)
def test_scalars_resolve_as_go_yaml_v3_does(text: str, value: object) -> None:
    assert yaml.load(f"a: {text}", Loader=StackFileLoader) == {"a": value}


def test_13_30_is_a_clock_time_not_810(tmp_path: Path) -> None:
    """PyYAML read `startTime: 13:30` as the base-60 integer 810, which the settings refused as not a string."""
    window = "  aks-mlops:autoUpgradeWindow:\n    dayOfWeek: Sunday\n    startTime: 13:30\n"
    config = load_stack_config("dev", project(tmp_path, dev_with(window)))
    assert config["aks-mlops:autoUpgradeWindow"]["startTime"] == "13:30"
    assert load_settings(stack_settings_raw(config)).auto_upgrade_window.start_time == "13:30"


def test_an_unquoted_date_is_the_string_pulumi_hands_over_and_is_refused_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pulumi up` hands the program "2026-12-20 00:00:00 +0000 UTC" (object.go: `case time.Time: v.String()`), which
    is no YYYY-MM-DD date; PyYAML's datetime.date stopped the plan with a TypeError traceback instead."""
    window = (
        "  aks-mlops:autoUpgradeWindow:\n    dayOfWeek: Sunday\n    startTime: '01:00'\n"
        "    notAllowedDates:\n      - start: 2026-12-20\n        end: '2027-01-04'\n"
    )
    folder = project(tmp_path, dev_with(window))
    assert load_stack_config("dev", folder)["aks-mlops:autoUpgradeWindow"]["notAllowedDates"] == [
        {"start": "2026-12-20 00:00:00 +0000 UTC", "end": "2027-01-04"}
    ]
    code, out = plan(folder, capsys)
    assert code == 2
    assert out.splitlines()[-1].startswith(
        "  aks-mlops:autoUpgradeWindow.notAllowedDates[0].start: '2026-12-20 00:00:00 +0000 UTC' "
    )


def test_a_top_level_value_is_handed_over_as_the_cli_writes_it(tmp_path: Path) -> None:
    text = dev_with("  aks-mlops:logRetentionDays: 6.0e1\n  other:date: 2026-12-24\n  other:empty:\n")
    config = engine_config(load_stack_config("dev", project(tmp_path, text)))
    assert (config["aks-mlops:logRetentionDays"], config["other:date"], config["other:empty"]) == (
        "60",
        "2026-12-24 00:00:00 +0000 UTC",
        "",
    )


# --- secrets --------------------------------------------------------------------------------------------------------


def test_a_secure_value_is_a_secret_not_an_object(tmp_path: Path) -> None:
    config = load_stack_config("dev", project(tmp_path, dev_with(SECRET_DEPLOYER)))
    assert config["aks-mlops:deployerObjectId"] == Secret(CIPHERTEXT)
    assert CIPHERTEXT not in repr(config)
    assert secret_keys(config) == ["aks-mlops:deployerObjectId"]
    assert stack_settings_raw(config)["deployerObjectId"] == PLACEHOLDER_GUID


def test_the_plan_runs_with_a_secret_deployer_and_never_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project(tmp_path / "project", dev_with(SECRET_DEPLOYER))
    out_dir = tmp_path / "out"
    code, out = plan(folder, capsys, "--out", str(out_dir))
    assert code == 0, out
    assert (
        "  note: aks-mlops:deployerObjectId is a secret: the offline plan cannot decrypt it and uses a placeholder "
        "(pulumi preview checks its value)"
    ) in out.splitlines()
    assert CIPHERTEXT not in out
    for report in out_dir.rglob("*"):
        if report.is_file():
            assert CIPHERTEXT not in report.read_text(), report


def test_the_program_gets_the_placeholder_and_the_key_marked_secret(tmp_path: Path) -> None:
    run = run_stack("dev", project_dir=project(tmp_path, dev_with(SECRET_DEPLOYER)))
    assert pulumi.runtime.is_config_secret("aks-mlops:deployerObjectId")
    assert pulumi.Config("aks-mlops").get("deployerObjectId") == PLACEHOLDER_GUID
    assert run.named("platform-deployer-cluster-admin").inputs["principalId"] == PLACEHOLDER_GUID


def test_secret_alert_emails_get_one_placeholder_each(tmp_path: Path) -> None:
    emails = "  aks-mlops:alertEmails:\n    - secure: v1:AAAA\n    - ml@example.com\n    - secure: v1:BBBB\n"
    text = dev_with(
        emails,
        replace=(
            "  aks-mlops:alertEmails:\n    - ml-platform-dev@example.com   # replace with your team's address\n",
            "",
        ),
    )
    folder = project(tmp_path, text)
    settings = load_settings(stack_settings_raw(load_stack_config("dev", folder)))
    assert settings.monitoring.alert_emails == (
        "ml@example.com",
        "secret-1@placeholder.invalid",
        "secret-3@placeholder.invalid",
    )
    run = run_stack("dev", project_dir=folder)
    (group,) = run.of_type("azure-native:monitor:ActionGroup")
    assert sorted(receiver["emailAddress"] for receiver in group.inputs["emailReceivers"]) == [
        "ml@example.com",
        "secret-1@placeholder.invalid",
        "secret-3@placeholder.invalid",
    ]


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("  aks-mlops:location: westeurope\n", "  aks-mlops:location:\n    secure: " + CIPHERTEXT + "\n"), "location"),
        (
            (
                "      vmSize: Standard_NC8as_T4_v3\n      workload: training\n",
                "      vmSize:\n        secure: " + CIPHERTEXT + "\n      workload: training\n",
            ),
            "gpuPools[0].vmSize",
        ),
    ],
    ids=["location", "nested"],
)
def test_a_secret_that_decides_what_is_built_is_refused_in_one_line(
    change: tuple[str, str], key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = plan(project(tmp_path, dev_with(replace=change)), capsys)
    assert code == 2
    assert out.splitlines()[-1] == (
        f"  aks-mlops:{key}: [secret] is a secret (secure:), which the offline plan and checker cannot decrypt, and "
        "this setting decides what the platform builds: keep it in plain text (settings that may be secret: "
        "deployerObjectId, alertEmails)"
    )
    assert CIPHERTEXT not in out


def test_a_secret_of_an_unknown_key_is_refused_as_unknown_without_its_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = dev_with(f"  aks-mlops:deployerObjectID:\n    secure: {CIPHERTEXT}\n")
    code, out = plan(project(tmp_path, text), capsys)
    assert code == 2
    assert out.splitlines()[-1].startswith(
        "  aks-mlops:deployerObjectID: [secret] is not a setting of this project (did you mean 'deployerObjectId'?)"
    )
    assert CIPHERTEXT not in out


def test_the_checker_runs_with_a_secret_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = project(tmp_path / "project", dev_with(SECRET_DEPLOYER), stack="secretive")
    empty = tmp_path / "workloads"
    empty.mkdir()
    assert main(["check", "secretive", str(empty), "--project-dir", str(folder), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["findings"] == [] and CIPHERTEXT not in out


def test_secret_admin_groups_are_refused_since_each_names_a_resource(tmp_path: Path) -> None:
    """Each admin group names its Grafana admin role assignment (`grafana-admin-<first 8 characters>`): a secret
    there would end up in a resource name, so the settings refuse it in one line."""
    text = dev_with(f"  aks-mlops:adminGroupObjectIds:\n    secure: {CIPHERTEXT}\n")
    config = load_stack_config("dev", project(tmp_path, text))
    with pytest.raises(ConfigError) as excinfo:
        load_settings(stack_settings_raw(config))
    assert excinfo.value.path == "adminGroupObjectIds"
    assert "settings that may be secret: deployerObjectId, alertEmails" in str(excinfo.value)
    assert CIPHERTEXT not in str(excinfo.value)


def test_secret_settings_stay_secret_on_the_resources_they_reach(tmp_path: Path) -> None:
    """The settings are read from the raw config, which carries no secrecy: the program marks what it passes on, so
    a secret deployer id and secret alert addresses stay encrypted in the state (components.base.stack)."""
    secret_emails = f"  aks-mlops:alertEmails:\n    secure: {CIPHERTEXT}\n"
    text = dev_with(SECRET_DEPLOYER + secret_emails, replace=(DEV_ALERT_EMAILS, ""))
    run = run_stack("dev", project_dir=project(tmp_path, text), raise_on_error=False)
    assert run.error is None, run.error
    deployer = run.named("platform-deployer-cluster-admin")
    assert "principalId" in deployer.secret_inputs and deployer.inputs["principalId"] == PLACEHOLDER_GUID
    (action_group,) = run.of_type("azure-native:monitor:ActionGroup")
    assert "emailReceivers" in action_group.secret_inputs
    assert [r["emailAddress"] for r in action_group.inputs["emailReceivers"]] == ["secret-1@placeholder.invalid"]


def test_plain_settings_are_not_marked_secret(stack_runs: dict[str, ProgramRun]) -> None:
    """The project's stacks keep them in plain text: nothing is marked secret that the stack file does not say is."""
    run = stack_runs["dev"]
    assert "principalId" not in run.named("platform-deployer-cluster-admin").secret_inputs
    (action_group,) = run.of_type("azure-native:monitor:ActionGroup")
    assert "emailReceivers" not in action_group.secret_inputs


# --- reading a file again --------------------------------------------------------------------------------------------


def test_an_edited_stack_file_is_read_again_and_a_caller_edits_only_its_copy(tmp_path: Path) -> None:
    """The parse of a file's content is kept (offline.stacks `_parsed_stack_config`): an edit in place, even within
    one clock tick and to the same length, is read, and what one caller changes reaches no other."""
    folder = project(tmp_path, dev_with(replace=("aks-mlops:location: westeurope", "aks-mlops:location: eastus2")))
    first = load_stack_config("dev", folder)
    assert first["aks-mlops:location"] == "eastus2"
    first["aks-mlops:location"] = "changed by a caller"
    first["aks-mlops:gpuPools"][0]["name"] = "changed by a caller"
    again = load_stack_config("dev", folder)
    assert (again["aks-mlops:location"], again["aks-mlops:gpuPools"][0]["name"]) == ("eastus2", "t4spot")
    (folder / "Pulumi.dev.yaml").write_text(
        dev_with(replace=("aks-mlops:location: westeurope", "aks-mlops:location: westus3"))
    )
    assert load_stack_config("dev", folder)["aks-mlops:location"] == "westus3"
