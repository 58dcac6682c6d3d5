# Tests of compiler (owned by whoever works on compiler).
maskprior_test(compiler_test SOURCES compiler_test.cpp LIBS maskprior_compiler TBB::tbb)
