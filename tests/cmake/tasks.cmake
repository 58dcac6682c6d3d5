# Tests of tasks (owned by whoever works on tasks).
