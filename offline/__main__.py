"""`python -m offline <stack>`: run the program for a stack on the mock engine, print what it would create.

No cloud credentials, no Pulumi CLI, no network: the real `__main__.py` runs against
`offline.fake_azure`, so configuration errors, the resource graph and the GPU capacity of every
pool can be reviewed before anyone runs `pulumi preview`. Exit status 2 means the stack's
configuration was rejected (the message names the key), 0 that the program ran.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from components.errors import ConfigError
from offline.engine import PROJECT_DIR, run_stack, stack_files
from offline.report import node_pool_table, resource_tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m offline", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack to run (a Pulumi.<stack>.yaml file)")
    parser.add_argument(
        "--project-dir", type=Path, default=PROJECT_DIR, help="folder of Pulumi.yaml (default: this project)"
    )
    args = parser.parse_args(argv)
    stacks = sorted(stack_files(args.project_dir))
    if args.stack not in stacks:
        parser.error(f"unknown stack {args.stack!r}; stacks: {', '.join(stacks)}")

    # The program's warnings (pulumi.log.warn) reach the mock engine's logger.
    logging.basicConfig(level=logging.WARNING, format="  warning: %(message)s", stream=sys.stdout)
    started = time.perf_counter()
    print(f"aks-mlops: offline run of stack '{args.stack}' on the Pulumi mock engine (no cloud calls)")
    run = run_stack(args.stack, project_dir=args.project_dir, raise_on_error=False)
    if isinstance(run.error, ConfigError):
        print(f"configuration rejected, nothing would be created:\n  {run.error}")
        return 2
    if run.error is not None:
        raise run.error
    print(f"\nresources ({len(run.resources)}):")
    print("\n".join(resource_tree(run)))
    print("\nGPU node pools:")
    print("\n".join(node_pool_table(run)))
    print("\nexports: " + ", ".join(sorted(f"{k} (secret)" if k in run.secret_outputs else k for k in run.outputs)))
    print(f"\ndone in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
