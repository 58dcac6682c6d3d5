# Tests of the arithmetic experiments.
maskprior_test(arith_test
  SOURCES arith_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io maskprior_validate)
