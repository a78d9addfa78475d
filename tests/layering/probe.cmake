# One layering probe (CMakeLists.txt): builds TARGET in BUILD_DIR.  EXPECT "compiles": the build
# must succeed.  Otherwise EXPECT is a regular expression the compiler's output must match, so the
# probe fails for the reason it names (the guard's #error text, or a header not on the include
# path), not for any other compile error.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(EXPECT STREQUAL "compiles")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET}: an allowed include does not compile:\n${out}")
  endif()
elseif(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET}: compiled, but the layering rule says it must not")
elseif(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET}: failed, but not with \"${EXPECT}\":\n${out}")
else()
  message(STATUS "${TARGET}: refused as it should be (${EXPECT})")
endif()
