# Tests of tensorio (owned by whoever works on tensorio).
