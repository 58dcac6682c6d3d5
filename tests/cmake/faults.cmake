# Faults: the folder lock and all-or-nothing writes under a full disk (faults_test);
# with the runtime, training faults end to end through maskc: kill -9 and resume, divergence, a
# full disk during a run, two processes on one folder (train_faults_test).
maskprior_test(faults_test SOURCES faults_test.cpp LIBS maskprior_io fmt::fmt)
if(MASKPRIOR_WITH_TORCH)
  maskprior_test(train_faults_test SOURCES train_faults_test.cpp
    LIBS maskprior_train fmt::fmt nlohmann_json::nlohmann_json)
  add_dependencies(train_faults_test maskc maskc-runtime)
endif()
