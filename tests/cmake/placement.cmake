# Placing a rank's runs on the machine's cores (experiments/placement.h): runs at once and threads
# per run under several ranks, as `maskc reproduce` and `maskc sweep` use it.
maskprior_test(placement_test SOURCES placement_test.cpp LIBS maskprior_experiments)
