"""The component contract, the Pulumi helpers every domain shares, and the program's first step.

`component.PlatformComponent` is the base of every ComponentResource (`Component(name, Args, opts)`, children
parented to it through one options helper); `kubernetes` registers manifests from pure builders and pinned Helm
releases; `azure` assigns built-in roles with deterministic names; `stack.load_platform()` reads the engine's config
into the validated platform model. Domains import this package, `components.core`, `components.config` and
`components.model`, never each other.
"""
