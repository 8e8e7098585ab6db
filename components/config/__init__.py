"""Pulumi config -> frozen, validated settings; registers nothing and imports no resource SDK.

`load_settings_from_pulumi()` is the program's first step: a bad value stops it with one
`ConfigError` naming the key before any resource exists. Modules: `errors` and `node` (typed reads
with key paths), `validators` (single values), `defaults` (every default, one table), `pools`,
`cluster`, `teams`, `monitoring`, `autoscaler` (readers by concern), `settings` (the aggregate type),
`prod` (the prod posture), `loader` (the order of it all).
"""
