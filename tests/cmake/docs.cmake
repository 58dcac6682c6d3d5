# The documentation's examples are real: every ```mask block of docs/language-reference.md
# compiles and every `$ maskc ...` block shows what maskc prints (tests/cli/language_reference.sh).
add_test(NAME language_reference_examples_compile
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/language_reference.sh $<TARGET_FILE:maskc>)
