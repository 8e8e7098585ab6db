"""`python -m offline`: the offline plan of a stack, or the workload checker; no cloud credentials needed.

* `python -m offline <stack> [--out DIR] [--policy-config FILE] [--quiet]`: the plan (offline.plan.cli).
* `python -m offline check <stack> PATH... [--json]`: team workload manifests against a stack (offline.checker.cli).

`check` is a subcommand word, so no stack may be named `check`. The checker is imported only for `check`, and it
imports no Pulumi SDK: a team's CI that only checks manifests starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from offline.stacks import CHECK_SUBCOMMAND


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == [CHECK_SUBCOMMAND]:
        # Imported here: each tool loads only what it needs (the plan the Pulumi SDK, the checker none of it).
        from offline.checker import cli as checker

        return checker.main(args[1:])
    from offline.plan import cli as plan

    return plan.main(args)


if __name__ == "__main__":
    sys.exit(main())
