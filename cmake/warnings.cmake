# tprop_warnings(target): the project's own warning set, errors when TPROP_WERROR is on (CI).
function(tprop_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
                                           -Wno-missing-field-initializers)
  if(TPROP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
