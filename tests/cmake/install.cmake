# An installed maskc (cmake --install to a temporary prefix) runs `reproduce demo` and `report`
# from outside the checkout, with the specs installed under share/maskprior.
add_test(NAME installed_maskc_reproduces_and_reports_outside_the_checkout
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/installed_maskc.sh ${CMAKE_BINARY_DIR}
    ${PROJECT_SOURCE_DIR})
set_tests_properties(installed_maskc_reproduces_and_reports_outside_the_checkout PROPERTIES
  TIMEOUT 600)
