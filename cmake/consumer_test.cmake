# ConsumerTest.BuildsAgainstTheInstalledPackage: installs this build tree into WORK/prefix, then
# configures, builds and runs examples/consumer (an outside project) against it with
# find_package(syncoll). Run by ctest as `cmake -P`, with BUILD, SOURCE, WORK, CXX and FLAGS set.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK})
run("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE}/examples/consumer -B ${WORK}/build
    -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/build)
execute_process(COMMAND ${WORK}/build/ring_property RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the consumer's property failed (${status})")
endif()
# The installed tree is large (static libraries with debug information): do not keep it.
file(REMOVE_RECURSE ${WORK})
