# Tests of the causal decoder (runtime/decoder.h): answer loss, greedy decoding, the key/value-
# cached completion and the metrics, on arithmetic problems.
maskprior_test(decoder_test
  SOURCES decoder_test.cpp
  LIBS maskprior_runtime maskprior_tasks)
