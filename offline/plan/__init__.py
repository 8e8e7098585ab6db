"""The offline plan of a stack (`python -m offline <stack>`): one harness run of the program, checked with the policy
pack (`policy`), printed (`console`) and written as reports (`write`: `inventory`, `capacity`, `cost`,
`create_time`, the reference workloads). `cli` is the command."""
