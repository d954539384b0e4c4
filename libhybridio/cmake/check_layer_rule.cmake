# check_layer_rule.cmake - the layer rule of libhybridio/CMakeLists.txt, as
# a test: with a layer's include root (ROOTS/<layer>), a file that includes
# a header of that layer compiles, and one that includes a header of the
# layer above it does not.
#
#   cmake -DCXX=<compiler> -DSRC=<libhybridio> -DROOTS=<build>/layers
#         -DLAYERS="platform;probe;..." -DWORK=<scratch dir> -P check_layer_rule.cmake
file(MAKE_DIRECTORY ${WORK})

# The first header of a layer, by name.
function(first_header layer out)
  file(GLOB headers RELATIVE ${SRC}/src ${SRC}/src/${layer}/*.h)
  list(SORT headers)
  list(GET headers 0 first)
  set(${out} ${first} PARENT_SCOPE)
endfunction()

# Compiles `#include "<header>"` with the include root of `layer`; sets
# `out` to the compiler's exit code and `log` to what it printed.
function(compile_include layer header out log)
  string(MAKE_C_IDENTIFIER "${layer}_${header}" name)
  set(source ${WORK}/${name}.cc)
  file(WRITE ${source} "#include \"${header}\"\n")
  execute_process(
    COMMAND ${CXX} -std=c++17 -fsyntax-only -I${SRC}/include -I${ROOTS}/${layer} ${source}
    RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} ${rc} PARENT_SCOPE)
  set(${log} "${text}" PARENT_SCOPE)
endfunction()

set(failures 0)
list(LENGTH LAYERS count)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  list(GET LAYERS ${i} layer)
  first_header(${layer} own)
  compile_include(${layer} ${own} rc text)
  if(NOT rc EQUAL 0)
    message(SEVERE_ERROR "${layer}: its own ${own} does not compile:\n${text}")
    math(EXPR failures "${failures} + 1")
  endif()
  if(i LESS last)
    math(EXPR j "${i} + 1")
    list(GET LAYERS ${j} above)
    first_header(${above} upper)
    compile_include(${layer} ${upper} rc text)
    if(rc EQUAL 0)
      message(SEVERE_ERROR "${layer} may include ${upper} of the layer above it")
      math(EXPR failures "${failures} + 1")
    elseif(NOT text MATCHES "No such file")
      message(SEVERE_ERROR "${layer}: including ${upper} failed, but not for want of the file:\n${text}")
      math(EXPR failures "${failures} + 1")
    else()
      message(STATUS "${layer}: ${own} compiles, ${upper} is out of reach")
    endif()
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} layer rule checks failed")
endif()
