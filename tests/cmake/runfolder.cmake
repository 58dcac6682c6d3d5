# The runfolder layer (runfolder/): the archive of a results folder, and `maskc report` on an archive
# against the run folders it came from (tests/cli/report_archive.sh: the same REPORT.md and plots).
find_package(ZLIB REQUIRED)
maskprior_test(runfolder_test
  SOURCES runfolder_test.cpp
  LIBS maskprior_runfolder maskprior_core nlohmann_json::nlohmann_json ZLIB::ZLIB)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME report_reads_an_archive_as_its_run_folders
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/report_archive.sh $<TARGET_FILE:maskc>
    ${PROJECT_SOURCE_DIR} ${Python3_EXECUTABLE})
