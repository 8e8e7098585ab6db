"""The test suite, in layers: `unit` (no engine), `component` (one component on the mock engine), `program`
(the whole program per stack, reports and policies), `project` (files, workflows, lint, architecture).
Shared vocabulary lives in `tests.support`; test modules never import each other."""
