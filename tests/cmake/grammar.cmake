# Tests of grammar (owned by whoever works on grammar).
