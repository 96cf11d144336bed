# Run at every build (not only at configure): writes build_info.hpp with the current commit and
# whether the tree had uncommitted changes. configure_file rewrites only when the text changes.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE PARITY_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT PARITY_GIT_SHA)
  set(PARITY_GIT_SHA "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    set(PARITY_GIT_SHA "${PARITY_GIT_SHA}+uncommitted")
  endif()
endif()
configure_file(${SOURCE_DIR}/cmake/build_info.hpp.in ${OUTPUT} @ONLY)
