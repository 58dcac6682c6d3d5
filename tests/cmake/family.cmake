# Task families (tasks/family.h): the built-in descriptors, and a toy family registered through the
# same path that trains, reports and runs as a reproduce suite.
maskprior_test(family_test SOURCES family_test.cpp
  LIBS maskprior_experiments maskprior_train maskprior_report maskprior_tasks maskprior_compiler fmt::fmt)
