# The downstream example (examples/downstream) built against an installed copy of this build.
# Skipped under sanitizers: the example is built without them, and linking it to sanitized
# libraries would need the sanitizer runtime preloaded.
if(NOT OPREG_SANITIZE)
  add_test(NAME downstream_example
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/downstream/run.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(downstream_example PROPERTIES TIMEOUT 300 LABELS downstream)
endif()
