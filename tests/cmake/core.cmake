# Tests of core: token labels of a layout and their binding to tokens.
maskprior_test(core_test
  SOURCES core_test.cpp
  LIBS maskprior_core)
