# Tests of the arithmetic experiments (issue 5).
