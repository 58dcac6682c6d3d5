# `maskc serve` (serve/): HTTP-level cases (tests/serve/serve_http.py) and the page in headless
# Chromium (tests/serve/serve_browser.py), one CTest test per case. Debian's python3 runs both
# (stdlib; the browser cases also python3-websocket and chromium, from scripts/setup.sh).
maskprior_test(serve_test
  SOURCES serve_test.cpp
  LIBS maskprior_serve nlohmann_json::nlohmann_json)

find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(case traversal_refused save_confined oversize_refused caps_as_compile malformed_refused
    spec_error_as_compile compile_matches_maskc concurrent_requests client_disconnects
    ctrl_c_exits_0 second_ctrl_c_exits_at_once host_warning cannot_serve validate_as_maskc
    deep_json_refused foreign_host_any_bind slowloris_bounded chunked_body_capped sizes_up_front
    busy_answers_at_once run_files_confined validation_time_limit runs_show_what_differs)
  add_test(NAME serve_http_${case}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/serve/serve_http.py
      $<TARGET_FILE:maskc> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(serve_http_${case} PROPERTIES TIMEOUT 120 LABELS serve)
endforeach()

# The page in a real browser. Exit 77 (a skip, which CTest reports) only when chromium or
# python3-websocket is missing.
foreach(case heatmap_matches_compile error_marks_line dashboard_curve_updates
    dashboard_groups_seeds keystroke_timing)
  add_test(NAME serve_browser_${case}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/serve/serve_browser.py
      $<TARGET_FILE:maskc> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(serve_browser_${case} PROPERTIES TIMEOUT 180 LABELS serve
    SKIP_RETURN_CODE 77 RUN_SERIAL ON)
endforeach()
