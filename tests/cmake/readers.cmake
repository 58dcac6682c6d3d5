# Tests of reading hostile inputs: FIFOs, devices, directories, files over the caps, tensor headers
# that claim more than --max-bytes (readers_test also runs the built maskc through MASKC_PATH).
maskprior_test(readers_test
  SOURCES readers_test.cpp
  LIBS maskprior_compiler maskprior_io maskprior_tasks fmt::fmt)
add_dependencies(readers_test maskc)
