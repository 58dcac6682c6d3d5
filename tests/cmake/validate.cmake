# Tests of validate (owned by whoever works on validate).
