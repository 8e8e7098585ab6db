"""Kueue's install: its custom resources wait for it, and every job integration it enables is backed by a controller
the stack installs before it.

Kueue, the Kubeflow Trainer and the JobSet it brings are Helm releases found by the chart names the program installs
(`components.core.versions`); the Kubeflow Training Operator v1 is a kustomization. Which integrations Kueue's chart
enables by default is the chart's own fact, which only this rule needs, so it is written here.
"""

from __future__ import annotations

import yaml
from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import KUEUE_PREFIX, Report, get
from aks_mlops_policies.resources import of_type, releases
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.versions import KUBEFLOW_TRAINER, KUBEFLOW_TRAINER_JOBSET, KUEUE

KUSTOMIZE_DIRECTORY = "kubernetes:kustomize/v2:Directory"
# Kueue's own integrations when a release sets no manager config (charts/kueue/values.yaml at v0.19.2, the version
# components.core.versions.KUEUE pins).
KUEUE_CHART_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
# Kinds Kubernetes itself runs: no install backs them.
BUILT_IN_FRAMEWORKS = frozenset({"batch/job", "pod", "deployment", "statefulset"})
# The Kubeflow Training Operator v1's kinds.
TRAINING_OPERATOR_V1_FRAMEWORKS = frozenset(
    {"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob", "kubeflow.org/paddlejob"}
)


def _kueue_objects_wait_for_install(args: StackValidationArgs, report: Report) -> None:
    installs = {r.urn for r in releases(args.resources, KUEUE.chart)}
    for resource in args.resources:
        waits = installs.intersection(d.urn for d in resource.dependencies)
        if resource.resource_type.startswith(KUEUE_PREFIX) and not waits:
            report(
                f"Kueue object {resource.name} does not depend on the Kueue install; the first `up` would fail "
                "with 'no matches for kind': add depends_on the Kueue release"
            )


kueue_objects_wait_for_install = StackValidationPolicy(
    name="kueue-objects-depend-on-install",
    description="Kueue custom resources are created only after the Kueue install (CRDs and webhook).",
    validate=decides_on_known_values(_kueue_objects_wait_for_install),
)


def _kueue_frameworks(release: PolicyResource) -> list[str]:
    text = get(release.props, "values", "managerConfig", "controllerManagerConfigYaml")
    if not text:
        return list(KUEUE_CHART_FRAMEWORKS)
    config = yaml.safe_load(text) or {}
    return [str(framework) for framework in get(config, "integrations", "frameworks", default=[]) or []]


def _framework_installs(framework: str, resources: list[PolicyResource]) -> tuple[str, list[PolicyResource]]:
    """What runs a framework's jobs (in words), and the installs of the stack that are it."""
    trainers = releases(resources, KUBEFLOW_TRAINER.chart)
    if framework == "trainer.kubeflow.org/trainjob":
        installs = [r for r in trainers if get(r.props, "values", "crds", "enabled", default=True) is not False]
        return f"Kubeflow Trainer (the {KUBEFLOW_TRAINER.chart} chart with its CRDs)", installs
    if framework == "jobset.x-k8s.io/jobset":
        bundled = [r for r in trainers if get(r.props, "values", "jobset", "install", default=True) is not False]
        standalone = releases(resources, KUBEFLOW_TRAINER_JOBSET.chart)
        what = f"the {KUBEFLOW_TRAINER.chart} chart's jobset.install, or a {KUBEFLOW_TRAINER_JOBSET.chart} chart"
        return f"JobSet ({what})", [*bundled, *standalone]
    if framework in TRAINING_OPERATOR_V1_FRAMEWORKS:
        operators = [
            r
            for r in of_type(resources, KUSTOMIZE_DIRECTORY)
            if "training-operator" in str(r.props.get("directory") or "")
        ]
        return "the Kubeflow Training Operator v1 (its kustomization)", operators
    return "its controller", []


def _kueue_integrations_installed(args: StackValidationArgs, report: Report) -> None:
    for release in releases(args.resources, KUEUE.chart):
        waits_for = {d.urn for d in release.dependencies}
        not_waited: dict[str, list[str]] = {}
        frameworks: list[str] = []
        with part(release.name):
            frameworks = _kueue_frameworks(release)
        for framework in frameworks:
            if framework in BUILT_IN_FRAMEWORKS:
                continue
            controller, installs = _framework_installs(framework, args.resources)
            if not installs:
                report(
                    f"Kueue release {release.name} enables integration {framework}, but the stack installs no "
                    f"controller for it ({controller}); install it, or drop {framework} from the manager config's "
                    "integrations.frameworks"
                )
            elif not waits_for.intersection(install.urn for install in installs):
                not_waited.setdefault(installs[0].name, []).append(framework)
        for install, frameworks in sorted(not_waited.items()):
            report(
                f"Kueue release {release.name} does not depend on {install}, which backs its integration "
                f"{', '.join(frameworks)}: the first `up` would start Kueue before those CRDs exist; add depends_on"
            )


kueue_integrations_installed = StackValidationPolicy(
    name="kueue-integrations-installed",
    description="Every job integration Kueue's release enables is backed by a controller the stack installs first.",
    validate=decides_on_known_values(_kueue_integrations_installed),
)

POLICIES = [kueue_objects_wait_for_install, kueue_integrations_installed]
