# Faults: the folder lock and all-or-nothing writes under a full disk (file_faults_test);
# with the runtime, training faults end to end through maskc: kill -9 and resume, divergence, a
# full disk during a run, two processes on one folder (run_faults_test).
maskprior_test(file_faults_test SOURCES file_faults_test.cpp LIBS maskprior_io fmt::fmt)
if(MASKPRIOR_WITH_TORCH)
  maskprior_test(run_faults_test SOURCES run_faults_test.cpp
    LIBS maskprior_train fmt::fmt nlohmann_json::nlohmann_json)
  add_dependencies(run_faults_test maskc maskc-runtime)
endif()
