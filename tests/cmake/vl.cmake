# Tests of the vision and language data: IDX and gzip files, Fashion-MNIST, the text
# corpus split. Small gzipped files are written by the tests with zlib.
find_package(ZLIB REQUIRED)
maskprior_test(vl_tasks_test
  SOURCES vl_tasks_test.cpp
  LIBS maskprior_tasks ZLIB::ZLIB fmt::fmt)
