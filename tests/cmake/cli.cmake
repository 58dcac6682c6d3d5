# Tests of cli (owned by whoever works on cli).
