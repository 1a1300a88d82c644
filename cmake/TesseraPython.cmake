# tessera_pick_python(): the Python interpreter the module is built for. The first python3 on
# PATH is often one without numpy and mpi4py (a pyenv or conda shim, a virtual environment),
# while the system's has them: each python3 on PATH, then /usr/bin/python3, is tried in turn,
# and the first that imports numpy and mpi4py and has its development headers wins.
# -DPython3_EXECUTABLE=… chooses one and skips the search. Sets:
#   Python3_EXECUTABLE       the interpreter chosen (unset when none fits)
#   TESSERA_PYTHON_TRIED     one line per interpreter tried and why it was passed over
function(tessera_pick_python)
  if(Python3_EXECUTABLE)
    set(_candidates ${Python3_EXECUTABLE})
  else()
    set(_candidates)
    string(REPLACE ":" ";" _path "$ENV{PATH}")
    foreach(dir IN LISTS _path)
      if(EXISTS "${dir}/python3" AND NOT IS_DIRECTORY "${dir}/python3")
        list(APPEND _candidates "${dir}/python3")
      endif()
    endforeach()
    list(APPEND _candidates /usr/bin/python3 /usr/local/bin/python3)
    list(REMOVE_DUPLICATES _candidates)
  endif()
  set(_tried "")
  foreach(py IN LISTS _candidates)
    if(NOT EXISTS "${py}")
      continue()
    endif()
    # Which modules are missing (each named: the hint must name the right package), and
    # where the headers the extension needs would be.
    execute_process(
      COMMAND "${py}" -c "import importlib.util as u, sysconfig, os
missing = [m for m in ('numpy', 'mpi4py') if u.find_spec(m) is None]
inc = sysconfig.get_paths()['include']
print(' '.join(missing) + '|' + ('' if os.path.exists(os.path.join(inc, 'Python.h')) else inc))"
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      string(APPEND _tried "\n  ${py}: does not run")
      continue()
    endif()
    string(REPLACE "|" ";" _parts "${_out}|")
    list(GET _parts 0 _missing)
    list(GET _parts 1 _noheaders)
    if(_missing)
      string(REPLACE " " ", " _list "${_missing}")
      string(REPLACE " " " python3-" _debs "python3-${_missing}")
      string(APPEND _tried
             "\n  ${py}: cannot import ${_list} (Debian: apt install ${_debs}; pip: "
             "${py} -m pip install ${_missing})")
    elseif(_noheaders)
      string(APPEND _tried
             "\n  ${py}: no development headers (no Python.h in ${_noheaders}; Debian: "
             "apt install python3-dev)")
    else()
      set(Python3_EXECUTABLE "${py}" PARENT_SCOPE)
      set(TESSERA_PYTHON_TRIED "${_tried}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  unset(Python3_EXECUTABLE PARENT_SCOPE)
  set(TESSERA_PYTHON_TRIED "${_tried}" PARENT_SCOPE)
endfunction()
