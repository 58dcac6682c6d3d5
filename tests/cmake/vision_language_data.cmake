# Tests of the vision and language data: IDX and gzip files, Fashion-MNIST, the text
# corpus split. Small gzipped files are written by the tests with zlib.
find_package(ZLIB REQUIRED)
maskprior_test(vision_language_data_test
  SOURCES vision_language_data_test.cpp
  LIBS maskprior_tasks ZLIB::ZLIB fmt::fmt)
