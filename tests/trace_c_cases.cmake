# trace_c_cases: the standalone C reproducer (fuzz_T --c OUT.c FILE) in the
# cases the seeds of trace_c do not reach:
#
#   env       the fuzz run's MMFUZZ_SLUB (options mm_create() applies) is
#             written into the C file: corpus/slub/src/basic.txt run with
#             MMFUZZ_SLUB=slub_fail_new_slab=2 (its allocations fail) gives a
#             C file that exits 0 in an environment without it, and the
#             file of a run without it exits 0 in an environment with it.
#   irq       what the interrupt handler took is forgotten when it frees it:
#             a slub input whose handler takes 4480 objects in all (70 times
#             arm fires=16 nalloc=4 nfree=4, alloc_bulk 16, free_bulk 16)
#             passes, and its C file exits 0 (it had a fixed table of 4096
#             entries and exited 1, "op -1: too many pages taken by the
#             handler", a false violation).
#   lost      pages lost by a free reproduce as B4 (the C file registers a
#             client walker over what it holds, and compares the state after
#             the teardown's frees and drain with the one after mm_reset(),
#             as instance.c does): the C file of buddy "alloc order=2; alloc
#             order=0; free idx=0" exits 0; without the call that frees the
#             order-2 block (its untrack() kept: the program lets it go) it
#             exits 1 with "op 2: B4 ... clients hold", and without the
#             teardown's free of the order-0 page it exits 1 with "B4
#             violated at teardown".
#
# Each C file is compiled with -Wall -Wextra -Werror against this build's
# libmmalloc.a.  Debug preset only, like trace_c.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(MM_TEST_HOOKS AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "")
    set(bins "")
    foreach(t buddy pcp slub)
      list(APPEND bins "-DFUZZ_${t}=$<TARGET_FILE:fuzz_${t}>")
    endforeach()
    add_test(NAME trace_c_cases
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DREF=${CMAKE_BINARY_DIR}
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/trace-c-cases -DCC=${CMAKE_C_COMPILER}
                     -DFLAGS=${CMAKE_C_FLAGS_DEBUG} -DDEBUG_LEVEL=${MM_DEBUG} -DWERROR=${MM_WERROR}
                     -DLIB=$<TARGET_FILE:mmalloc> ${bins}
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(trace_c_cases PROPERTIES PASS_REGULAR_EXPRESSION "TRACE-C-CASES-OK" TIMEOUT 300)
  endif()
  return()
endif()

# ---------------------------------------------------------------- the script

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(cflags -std=gnu11 -Wall -Wextra -Werror -I${SRC}/allocator/include)

set(trace_c_timeout 120)
include(${SRC}/tests/support/trace_c_lib.cmake)   # write(), build_run()

# ---------------------------------------------------------------- env: MMFUZZ_SLUB
set(ENV{MMFUZZ_SLUB} "slub_fail_new_slab=2")
write(slub ${SRC}/corpus/slub/src/basic.txt ${WORK}/env-set.c)
unset(ENV{MMFUZZ_SLUB})
build_run(${WORK}/env-set.c ${LIB} 0 MATCH "no violation")
write(slub ${SRC}/corpus/slub/src/basic.txt ${WORK}/env-unset.c)
set(ENV{MMFUZZ_SLUB} "slub_fail_new_slab=2")
build_run(${WORK}/env-unset.c ${LIB} 0 MATCH "no violation")
unset(ENV{MMFUZZ_SLUB})
message(STATUS "env: the C file sets the fuzz run's MMFUZZ_SLUB (and clears one it did not have)")

# ---------------------------------------------------------------- irq: a long interrupt-heavy input
set(text "setup config=tiny cpus=2\ncreate size=32 align=0 flags=0 ctor=0\n")
foreach(i RANGE 1 70)
  string(APPEND text "arm point=tid_read action=irq skip=0 fires=16 cpu=0 cache=0 nalloc=4 nfree=4 order=fifo\n"
                     "alloc_bulk cache=0 n=16 cpu=0\nfree_bulk n=16 idx=0 cpu=0\n")
endforeach()
file(WRITE ${WORK}/irqmany.txt "${text}")
write(slub ${WORK}/irqmany.txt ${WORK}/irqmany.c)
file(STRINGS ${WORK}/irqmany.c keeps REGEX "^\tirq_keep[(]")
list(LENGTH keeps nkeeps)
if(nkeeps LESS 4097)
  message(FATAL_ERROR "irqmany: the handler took ${nkeeps} objects, want more than 4096")
endif()
build_run(${WORK}/irqmany.c ${LIB} 0 MATCH "no violation")
message(STATUS "irq: a handler that took ${nkeeps} objects: its C file exits 0")

# ---------------------------------------------------------------- lost: B4 in the C file
file(WRITE ${WORK}/lost.txt "setup config=tiny cpus=1 prefetch=0\nalloc order=2 gfp=GFP_KERNEL\n"
                            "alloc order=0 gfp=GFP_KERNEL\nfree idx=0\n")
write(buddy ${WORK}/lost.txt ${WORK}/lost.c)
build_run(${WORK}/lost.c ${LIB} 0 MATCH "no violation")
file(READ ${WORK}/lost.c text)
foreach(x "free:__free_pages\\(mm, p1, 2\\);:op 2: B4 violated: clients hold"
          "teardown:__free_pages\\(mm, p2, 0\\);:op 3: B4 violated at teardown: zone [0-9]: NR_FREE_PAGES")
  string(REPLACE ":" ";" x "${x}")
  list(GET x 0 name)
  list(GET x 1 call)
  list(GET x 2 want)
  string(REGEX MATCHALL "\n\t${call}" found "${text}")
  list(LENGTH found nfound)
  if(NOT nfound EQUAL 1)
    message(FATAL_ERROR "lost.c: ${nfound} lines '${call}', want 1:\n${text}")
  endif()
  string(REGEX REPLACE "\n\t${call}" "\n\t/* leaked */" leak "${text}")
  file(WRITE ${WORK}/lost-${name}.c "${leak}")
  build_run(${WORK}/lost-${name}.c ${LIB} 1 MATCH "${want}")
endforeach()
message(STATUS "lost: a block the program lets go of unfreed is B4 in the C file, in an op (walker) and at teardown")

message("TRACE-C-CASES-OK")
