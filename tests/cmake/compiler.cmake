# Tests of compiler (owned by whoever works on compiler).
maskprior_test(compiler_test SOURCES compiler_test.cpp LIBS maskprior_compiler TBB::tbb)
maskprior_test(write_spec_test SOURCES write_spec_test.cpp LIBS maskprior_compiler)
