# Tests of tasks: Boolean and arithmetic tasks, splits, truth tables (CSV).
maskprior_test(tasks_test
  SOURCES tasks_test.cpp
  LIBS maskprior_tasks)
