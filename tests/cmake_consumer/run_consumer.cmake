# cmake -DBUILD_DIR=<livebound build> -DWORK_DIR=<scratch> -DSOURCE_DIR=<this directory>
#       -DGENERATOR=<generator> -P run_consumer.cmake
# Installs the livebound build into WORK_DIR/prefix, then configures and builds the consumer
# project against that prefix alone and runs both of its executables.
foreach (var BUILD_DIR WORK_DIR SOURCE_DIR GENERATOR)
    if (NOT DEFINED ${var})
        message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
    endif ()
endforeach ()
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
    if (NOT rc EQUAL 0)
        string(REPLACE ";" " " command "${ARGN}")
        message(FATAL_ERROR "failed (${rc}): ${command}")
    endif ()
endfunction()
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer_shared")
run("${WORK_DIR}/build/consumer_static")
