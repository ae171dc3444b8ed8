# Writes the unit that names the commit the binary was built from (miniapp/core/build_info.hpp),
# run at every build (cmake -P) so the name is never stale, and rewriting the unit only when the
# name changed: a new commit recompiles one file, not every object.
#
#   cmake -DSOURCE_DIR=... -DTEMPLATE=... -DOUTPUT=... [-DFIXED_COMMIT=...] -P GitCommit.cmake
#
# FIXED_COMMIT: a copy without .git (scripts/bundle.sh) passes the commit it was made from.
if(FIXED_COMMIT)
  set(MINIAPP_GIT_COMMIT "${FIXED_COMMIT}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE MINIAPP_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE failed)
  if(failed OR NOT MINIAPP_GIT_COMMIT)
    set(MINIAPP_GIT_COMMIT unknown)
  else()
    # Tracked files changed since that commit: say so, as scripts/bundle.sh does.
    execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SOURCE_DIR}"
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND MINIAPP_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
