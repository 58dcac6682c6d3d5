# Tests of core: token labels of a layout and their binding to tokens, the process supervisor.
maskprior_test(core_test
  SOURCES core_test.cpp
  LIBS maskprior_core)
