"""`python -m offline simulate`: replay a job trace against a stack's Kueue queues and GPU pools, offline.

`trace` reads and validates the trace, `model` derives the queues and pools from the platform model, `quota` holds
Kueue's quota arithmetic, `admission` its flavor assignment and classic preemption, `fair_sharing` its fair sharing
(shares, admission order, preemption strategies), `engine` the event-driven replay, `report` the summaries,
`simulation.json` and `--compare`, `picture` the SVG, `cli` the command; `synthetic` builds a seeded trace from a
stack and `bench` times a large one. What the simulation leaves out is listed in docs/operating.md
("Simulating a job trace").
"""
