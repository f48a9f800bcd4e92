# The examples built against an installed copy of this build: examples/downstream
# (OPREG_LIBRARY), examples/torch_compat (unchanged TORCH_LIBRARY sources) and
# examples/torch_stable (unchanged stable-ABI sources). Skipped under
# sanitizers: the examples are built without them, and linking them to sanitized libraries
# would need the sanitizer runtime preloaded.
if(NOT OPREG_SANITIZE)
  foreach(example downstream torch_compat torch_stable)
    add_test(NAME ${example}_example
      COMMAND bash ${PROJECT_SOURCE_DIR}/tests/downstream/run.sh ${PROJECT_BINARY_DIR} ${example})
    set_tests_properties(${example}_example PROPERTIES TIMEOUT 300 LABELS downstream
      RUN_SERIAL TRUE)
  endforeach()
endif()
