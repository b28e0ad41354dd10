# The standalone C reproducer (./mmfuzz trace TARGET FILE --c OUT.c, which
# runs fuzz_TARGET --c OUT.c FILE):
#
#   trace_c   for every seed of corpus/T/ and corpus/regressions/T/ of the
#             targets buddy pcp bulk slub kmalloc watermark config:
#               - fuzz_T --c writes the C file and exits 0;
#               - it compiles with this build's compiler, -Wall -Wextra
#                 -Werror, against this build's libmmalloc.a alone (and
#                 with clang -fsyntax-only, when there is a clang);
#               - it runs and exits 0 ("no violation") on this allocator;
#               - every op kind in the target's seeds wrote something
#                 besides its `/* [k] op */` comment and `check(k);` in some
#                 C file (an op that makes no allocator call says so in a
#                 comment);
#             injections: the C files of corpus/pcp/irq, bulk/pcp,
#             slub/irq, slub/pending and slub/migrate script the fuzz run's
#             interrupts and migrations (hook_script(); each C file checks
#             that each was made at the same kind of preemption point and
#             that its handler ran as often, so their exit 0 above means all
#             were made), and pcp/irq's without its script exits 2;
#             and the reproducer reproduces: two bug-zoo variants of this
#             allocator library (gcc debug like this build; tools/bugzoo/
#             cc-reuse copies every object without an MM_INJECT block from
#             this build, so a variant compiles one file and archives), and
#             the C files this build wrote for the inputs that catch them
#             must exit 1 against the variant, naming the check:
#               slub-double-free-unchecked  corpus/slub/debug (the double free
#                                           of a cpu freelist's head is not
#                                           reported)
#               bulk-return-count           corpus/bulk/array (an entry after
#                                           the returned index is filled)
#             and one that needs the injected interrupts: slub-free-cond-flipped
#             (fuzz_slub built too), whose fuzz run of corpus/slub/irq fails S1
#             at op 20; the C file that run writes (its scripted injections)
#             exits 1 against the variant, naming S1 at op 20, and 0 against
#             this library;
# Measured on two shared cores: 21 s the first time (the three variants
# configure and build), 10 s after.  In the debug preset only (gcc, Debug,
# no sanitizer, no engine, no injection), like bugzoo_smoke.
#
# The same file is the test's script (cmake -P, CMAKE_SCRIPT_MODE_FILE set).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(MM_TEST_HOOKS AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "")
    set(bins "")
    foreach(t buddy pcp bulk slub kmalloc watermark config)
      list(APPEND bins "-DFUZZ_${t}=$<TARGET_FILE:fuzz_${t}>")
    endforeach()
    find_program(MF_TRACE_C_CLANG clang)
    add_test(NAME trace_c
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DREF=${CMAKE_BINARY_DIR} -DCLANG=${MF_TRACE_C_CLANG}
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/trace-c -DCC=${CMAKE_C_COMPILER}
                     -DFLAGS=${CMAKE_C_FLAGS_DEBUG} -DDEBUG_LEVEL=${MM_DEBUG} -DWERROR=${MM_WERROR}
                     -DLIB=$<TARGET_FILE:mmalloc> ${bins}
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(trace_c PROPERTIES PASS_REGULAR_EXPRESSION "TRACE-C-OK" TIMEOUT 300)
  endif()
  return()
endif()

# ---------------------------------------------------------------- the script

set(targets buddy pcp bulk slub kmalloc watermark config)
set(cflags -std=gnu11 -Wall -Wextra -Werror -I${SRC}/allocator/include)
file(MAKE_DIRECTORY ${WORK})

include(${SRC}/tests/support/trace_c_lib.cmake)   # write(), build_run()

# ops(C T): add the ops of C to seen_T, and those that wrote more than their comment and check to emitted_T.
function(ops c t)
  file(STRINGS ${c} lines)
  set(seen ${seen_${t}})
  set(emitted ${emitted_${t}})
  set(op "")
  foreach(l IN LISTS lines)
    if(l MATCHES "^\t/\\* \\[[0-9]+\\] ([a-z_0-9]+)")
      set(op ${CMAKE_MATCH_1})
      list(APPEND seen ${op})
    elseif(l MATCHES "^\t(check|check_at)\\(" OR l MATCHES "^\t/\\* teardown")
      set(op "")
    elseif(op)
      list(APPEND emitted ${op})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES seen)
  list(REMOVE_DUPLICATES emitted)
  set(seen_${t} ${seen} PARENT_SCOPE)
  set(emitted_${t} ${emitted} PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- every seed exits 0
set(count 0)
foreach(t ${targets})
  file(GLOB seeds LIST_DIRECTORIES false ${SRC}/corpus/${t}/* ${SRC}/corpus/regressions/${t}/*)
  foreach(s ${seeds})
    get_filename_component(n ${s} NAME)
    set(c ${WORK}/${t}-${n}.c)
    write(${t} ${s} ${c})
    ops(${c} ${t})
    build_run(${c} ${LIB} 0 MATCH "no violation")
    math(EXPR count "${count} + 1")
  endforeach()
  set(silent ${seen_${t}})
  if(emitted_${t})
    list(REMOVE_ITEM silent ${emitted_${t}})
  endif()
  if(silent)
    message(FATAL_ERROR "target ${t}: these ops wrote nothing into any C file of its seeds: ${silent}")
  endif()
  list(LENGTH seen_${t} nseen)
  message(STATUS "${t}: ${nseen} op kinds in its seeds, each writes its calls (or says why none)")
endforeach()
message(STATUS "${count} seeds: C file written, compiled warning-free, exit 0")

# ---------------------------------------------------------------- injections: scripted
foreach(x pcp:irq bulk:pcp slub:irq slub:pending slub:migrate)
  string(REPLACE ":" ";" x ${x})
  list(GET x 0 t)
  list(GET x 1 n)
  file(READ ${WORK}/${t}-${n}.c text)
  string(REGEX MATCHALL "\n\tif \\(op == [0-9]+ && n == [0-9]+\\)\n\t\tact\\(" acts "${text}")
  list(LENGTH acts nacts)
  if(nacts LESS 3)
    message(FATAL_ERROR "corpus/${t}/${n}: ${nacts} scripted injections in its C file, want 3 or more")
  endif()
  set(summary "${summary} ${t}/${n} ${nacts}")
endforeach()
# The C file checks its schedule: without its script it must say it diverged.
file(READ ${WORK}/pcp-irq.c text)
string(REGEX REPLACE "\n\t\tact\\([^\n]*" "\n\t\t(void)0;" text "${text}")
file(WRITE ${WORK}/noscript-pcp-irq.c "${text}")
build_run(${WORK}/noscript-pcp-irq.c ${LIB} 2 NOCLANG MATCH "diverged from the fuzz run")
message(STATUS "injections scripted (and made: the C files exited 0 above):${summary}; pcp/irq's C file without its script: exit 2")

# ---------------------------------------------------------------- reproducing bugs of the zoo
include(${SRC}/tools/bugzoo/variant.cmake)
function(zoo_lib bug out)
  zoo_variant(${bug} ${WORK}/zoo-${bug} mmalloc ${ARGN})
  set(${out} ${WORK}/zoo-${bug}/allocator/libmmalloc.a PARENT_SCOPE)
endfunction()

zoo_lib(slub-double-free-unchecked dfree)
build_run(${WORK}/slub-debug.c ${dfree} 1 NOCLANG MATCH "op 11: C1 violated: the bad free \\(double_fresh\\) is reported exactly 1")
zoo_lib(bulk-return-count bret)
build_run(${WORK}/bulk-array.c ${bret} 1 NOCLANG MATCH "op 1: C1 violated: no entry after the returned index is filled")
# A bug that needs the injections: the failing run's own C file (fuzz_slub of the variant) of corpus/slub/irq,
# with its scripted interrupts and migrations (201 on 2026-12-03), exits 1 against the variant and 0 against this library.
zoo_lib(slub-free-cond-flipped flip fuzz_slub)
get_filename_component(flipdir ${flip} DIRECTORY)
get_filename_component(flipdir ${flipdir} DIRECTORY)
# The C file is renamed over OUT.c by the ending the violation writes, before the abort (cgen.c): a
# previous run's file is removed first, or it would pass for this run's (--c no longer empties OUT.c at once).
file(REMOVE ${WORK}/flip-slub-irq.c)
execute_process(COMMAND ${flipdir}/targets/fuzz_slub --c ${WORK}/flip-slub-irq.c ${SRC}/corpus/slub/irq
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
# The per-op level does not see it: the final level-3 check after the last op, op [20], does.
if(NOT rc OR NOT err MATCHES "VIOLATION S1 in target slub, at the final level-3 check after op \\[20\\]")
  message(FATAL_ERROR "corpus/slub/irq on slub-free-cond-flipped: exit ${rc}, want a crash at the final check after op [20] (S1):\n${err}")
endif()
if(NOT EXISTS ${WORK}/flip-slub-irq.c)
  message(FATAL_ERROR "corpus/slub/irq on slub-free-cond-flipped: the violating run left no C file\n${err}")
endif()
build_run(${WORK}/flip-slub-irq.c ${flip} 1 NOCLANG MATCH "op 20: S1 violated")
build_run(${WORK}/flip-slub-irq.c ${LIB} 0 NOCLANG MATCH "did not reproduce here")
message(STATUS "slub-double-free-unchecked: slub/debug's C file exits 1 (op 11); bulk-return-count: bulk/array's exits 1 (op 1); "
               "slub-free-cond-flipped: the failing run's C file of slub/irq exits 1 (op 20, S1), 0 on this library")
message("TRACE-C-OK")
