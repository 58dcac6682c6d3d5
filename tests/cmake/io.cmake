# Tests of io: safetensors, npy and mask files, atomic writes, JSON files.
maskprior_test(io_test
  SOURCES io_test.cpp
  LIBS maskprior_io)
