"""Stack config -> frozen, validated settings; registers nothing and imports no Pulumi SDK at all.

`loader.load_settings(raw)` reads every key: a bad value raises one `ConfigError` naming the key before any resource
exists (the program's entry, `components.base.stack.load_platform`, hands it the engine's config). Modules: `errors`
and `node` (typed reads with key paths), `validators` (single values), `defaults` (every default, one table),
`pools`, `cluster`, `teams`, `serving`, `monitoring`, `autoscaler`, `storage`, `workloads` (readers by concern),
`settings` (the aggregate type), `prod` (the prod posture), `loader` (the order of it all). What is derived from the
settings lives in `components.model`.
"""
