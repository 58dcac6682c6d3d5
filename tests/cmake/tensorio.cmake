# Tests of tensorio: safetensors/npy files, atomic writes, text grid and PNG rendering.
maskprior_test(tensorio_test
  SOURCES tensorio_test.cpp
  LIBS maskprior_tensorio PNG::PNG)
