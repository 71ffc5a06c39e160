# TPROP_SANITIZE: the whole tree built with AddressSanitizer and UndefinedBehaviorSanitizer,
# every report fatal. cmake/dev.sh test builds such a tree (build-asan) beside the normal one
# and runs its tests; LeakSanitizer's suppressions for the Vulkan driver are in
# tests/lsan_suppressions.txt (tests/CMakeLists.txt hands them to every test).
# TPROP_FUZZ: the libFuzzer harnesses of tests/fuzz/, run for a bounded time as tests. Needs
# clang with libFuzzer (Debian: clang-15 and libfuzzer-15-dev) and turns TPROP_SANITIZE on.
option(TPROP_SANITIZE "Build with -fsanitize=address,undefined; any report is an error" OFF)
option(TPROP_FUZZ "Build and run the libFuzzer harnesses (clang; implies TPROP_SANITIZE)" OFF)

if(TPROP_FUZZ)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }]]
    TPROP_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT TPROP_HAVE_LIBFUZZER)
    message(FATAL_ERROR "TPROP_FUZZ needs a compiler with libFuzzer (-fsanitize=fuzzer): "
                        "configure with CMAKE_CXX_COMPILER=clang++-15 (Debian: clang-15 "
                        "libfuzzer-15-dev)")
  endif()
  set(TPROP_SANITIZE ON CACHE BOOL "" FORCE)
endif()

if(TPROP_SANITIZE)
  # Frame pointers give whole stacks in reports at little cost. -O2: this tree's tests are the
  # suite's longest, its GPU tests one thread's CPU work (the reference, the scenes, the
  # checks); at -O1 they took 1.26 times as long, for a build a minute shorter (glm at -O0
  # three times). The two template-heavy loaders are compiled at -O0 instead
  # (hierarchy/CMakeLists.txt), 2.5 times faster to build, as this tree is built on every
  # `cmake/dev.sh test` of a fresh checkout. The build type's NDEBUG is dropped so that
  # asserts check too.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
  # Stack use after return is off at run time unless ASAN_OPTIONS asks for it, which the tests
  # do not; clang's default still calls into the runtime on every instrumented function's entry
  # to ask (3% of the GPU tests' time).
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    add_compile_options(-fsanitize-address-use-after-return=never)
  endif()
  foreach(config RELWITHDEBINFO RELEASE DEBUG)
    set(CMAKE_CXX_FLAGS_${config} "-O2 -g")
    set(CMAKE_C_FLAGS_${config} "-O2 -g")
  endforeach()
endif()
