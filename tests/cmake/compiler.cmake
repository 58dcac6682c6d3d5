# Tests of compiler (owned by whoever works on compiler).
