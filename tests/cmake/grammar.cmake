# Tests of grammar (owned by whoever works on grammar).
maskprior_test(grammar_test SOURCES grammar_test.cpp LIBS maskprior_grammar)
