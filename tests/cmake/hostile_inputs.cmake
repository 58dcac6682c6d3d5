# Tests of reading hostile inputs: FIFOs, devices, directories, files over the caps, tensor headers
# that claim more than --max-bytes (hostile_inputs_test also runs the built maskc through MASKC_PATH).
maskprior_test(hostile_inputs_test
  SOURCES hostile_inputs_test.cpp
  LIBS maskprior_compiler maskprior_io maskprior_tasks fmt::fmt)
add_dependencies(hostile_inputs_test maskc)
