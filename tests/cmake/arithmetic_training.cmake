# Tests of the arithmetic experiments.
maskprior_test(arithmetic_training_test
  SOURCES arithmetic_training_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io maskprior_validate)

# Length generalisation (issue #48): tasks at any size, runs over several sizes.
maskprior_test(length_test
  SOURCES length_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_io)
