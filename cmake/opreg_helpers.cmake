# Shared compile settings for opreg targets.

# Warnings and sanitizers for a target of this project (not applied to dependencies).
function(opreg_target_settings target)
  # -fno-semantic-interposition: calls inside a library to its own functions (the template
  # instantiations it emits included) bind locally instead of through the PLT; the call path
  # of every op goes through several. Symbols stay exported and unique.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -fno-semantic-interposition>)
  if(OPREG_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${OPREG_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE -fsanitize=${OPREG_SANITIZE})
  endif()
endfunction()

# opreg_add_component(NAME SOURCES ... DEPS ...): a shared library opreg_NAME with the alias
# opreg::NAME, public headers under NAME/include, installed and exported.
function(opreg_add_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(opreg_${name} SHARED ${ARG_SOURCES})
  add_library(opreg::${name} ALIAS opreg_${name})
  set_target_properties(opreg_${name} PROPERTIES EXPORT_NAME ${name}
    INSTALL_RPATH "$ORIGIN")
  target_include_directories(opreg_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(opreg_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  opreg_target_settings(opreg_${name})
  install(TARGETS opreg_${name} EXPORT opregTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
