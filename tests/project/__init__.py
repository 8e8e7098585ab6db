"""The project's files agree with the code: config declarations, README, CI, workflows, lint and architecture."""
