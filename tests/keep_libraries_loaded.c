/* Preloaded into the sanitizer tree's tests (LD_PRELOAD, tests/CMakeLists.txt): dlclose does
   nothing, so the Vulkan loader's dlclose of the driver (lavapipe) and of the validation layer
   at vkDestroyInstance leaves them mapped. LeakSanitizer checks at exit; by then an unloaded
   library's frames are "<unknown module>", which no suppression can name, so the driver's own
   process-lifetime allocations could only be excused by excusing everything. Kept mapped, they
   are named, and tests/lsan_suppressions.txt excuses exactly those libraries. Built without
   sanitizers: it is also preloaded into the plain tools the tests start (sh, script). */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
