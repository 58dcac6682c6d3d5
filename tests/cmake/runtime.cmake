# Tests of runtime (owned by whoever works on runtime).
