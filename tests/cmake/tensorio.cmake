# Tests of tensorio: safetensors/npy files, atomic writes, text grid and PNG rendering.
maskprior_test(tensorio_test
  SOURCES tensorio_test.cpp
  LIBS maskprior_io maskprior_render maskprior_compiler PNG::PNG)
