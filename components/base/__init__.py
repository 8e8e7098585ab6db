"""The component contract and the Pulumi helpers every domain shares.

`component.PlatformComponent` is the base of every ComponentResource (`Component(name, Args, opts)`,
children parented to it through one options helper); `kubernetes` registers manifests from pure
builders and pinned Helm releases; `azure` assigns built-in roles with deterministic names. Domains
import this package and `components.core`/`components.config`, never each other.
"""
