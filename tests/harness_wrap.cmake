# The targets' own checks, each shown to catch an allocator bug it is there
# for: tests/harness_wrap.c plants the bug from outside the library
# (-Wl,--wrap=F around an API function F), so a variant is one extra object
# and a link, with the correct library.
#
#   harness_wrap   fuzz_sched with REPORT_ON_FREE: a report raised by op [1]
#                    (a free) fails that op, not teardown;
#                  fuzz_pcp with PENDING_KEPT: cpu_api pending_no_handler
#                    fails when the interrupt is not dropped; and the C file
#                    the correct fuzz_pcp writes for that input, linked with
#                    the same wrap, exits 1 naming the op;
#                  the C file of an options op (slub) linked with
#                    FASTPATH_IGNORED exits 1 naming the op, as the fuzz run
#                    of that variant fails;
#                  the same for kmalloc's options op (the fuzz run and its
#                    C file);
#                  the C file of cpu_api try_offline linked with OFFLINE_NOOP
#                    exits 1 naming the op;
#                    its report prints every op that ran before (t0's ops [2]
#                    and [3] before t1's [1]), and no --c in its repro hint;
#                  MMFUZZ_STATS=1 fuzz_sched prints its stats, and
#                    MMFUZZ_CRASH_AT_OP=1 makes it die of SIGSEGV;
#                  fuzz_sched --c is refused: exit 2, no file written;
#                  a crash inside an allocator call (review harness2 #1,
#                    the calls registered last): fuzz_bulk with CRASH_BULK
#                    dies inside __alloc_pages_bulk (array and list),
#                    fuzz_pcp with CRASH_PCP inside mm_pcp_update and inside
#                    its interrupt handler's alloc_pages (run inside the
#                    task's alloc_pages: both in flight), fuzz_slub with
#                    CRASH_SLUB inside kmem_cache_create and
#                    kmem_cache_shrink, fuzz_config with CRASH_CONFIG inside
#                    mm_config_validate; each C file ends that op with the
#                    call marked as in flight, compiles, dies the same way
#                    linked with the same wrap and runs to its end against
#                    the correct library ("did not reproduce");
#                  a crash ending inside blocks of main() closes them:
#                    fuzz_pcp with BLOCK_OPEN writes two open blocks (and
#                    braces in a comment, a string, character literals and
#                    a line comment) into its C file and aborts; the C file
#                    closes exactly those two, compiles and exits 0;
#                  every input passes on the correct targets, and its C file
#                    exits 0 against the correct library.
# In the debug preset only (gcc, no sanitizer, no engine, no injection, the
# preemption points of MM_TEST_HOOKS: the pending interrupt is dropped at one).
# The same file is the test's script (cmake -P, CMAKE_SCRIPT_MODE_FILE set).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none"
     AND "${MM_INJECT}" STREQUAL "" AND MM_TEST_HOOKS)
    set(wrapsrc ${CMAKE_CURRENT_SOURCE_DIR}/harness_wrap.c)
    set(bins "")
    # name target WRAP symbols...
    foreach(v "sched_report;sched;REPORT_ON_FREE;kmem_cache_free"
              "pcp_pending;pcp;PENDING_KEPT;mm_set_irq_pending,--wrap=mm_set_irq_handler"
              "slub_fastpath;slub;FASTPATH_IGNORED;mm_slub_configure"
              "kmalloc_fastpath;kmalloc;FASTPATH_IGNORED;mm_slub_configure"
              "bulk_crash;bulk;CRASH_BULK;__alloc_pages_bulk"
              "pcp_crash;pcp;CRASH_PCP;mm_pcp_update,--wrap=alloc_pages"
              "slub_crash;slub;CRASH_SLUB;kmem_cache_create,--wrap=kmem_cache_shrink"
              "config_crash;config;CRASH_CONFIG;mm_config_validate"
              "pcp_block;pcp;BLOCK_OPEN;mm_pcp_update")
      list(GET v 0 name)
      list(GET v 1 t)
      list(GET v 2 def)
      list(GET v 3 syms)
      add_executable(wrap_${name} ${PROJECT_SOURCE_DIR}/targets/${t}.c ${PROJECT_SOURCE_DIR}/targets/common/replay_main.c
                     ${wrapsrc})
      target_link_libraries(wrap_${name} PRIVATE mmfuzz_harness mmalloc_internal)
      target_compile_definitions(wrap_${name} PRIVATE WRAP_${def}=1)
      target_link_options(wrap_${name} PRIVATE -Wl,--wrap=${syms})
      if(t STREQUAL "sched")
        target_link_libraries(wrap_${name} PRIVATE mmsched)
        target_compile_definitions(wrap_${name} PRIVATE MF_SCHED_LINKED=1)
        target_include_directories(wrap_${name} PRIVATE ${PROJECT_SOURCE_DIR}/allocator)
      endif()
      list(APPEND bins "-DWRAP_${name}=$<TARGET_FILE:wrap_${name}>")
    endforeach()
    foreach(t sched pcp slub kmalloc bulk config)
      list(APPEND bins "-DFUZZ_${t}=$<TARGET_FILE:fuzz_${t}>")
    endforeach()
    add_test(NAME harness_wrap
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/harness-wrap
                     -DCC=${CMAKE_C_COMPILER} -DLIB=$<TARGET_FILE:mmalloc> ${bins} -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(harness_wrap PROPERTIES PASS_REGULAR_EXPRESSION "HARNESS-WRAP-OK" TIMEOUT 300)
  endif()
  return()
endif()

# ---------------------------------------------------------------- the script

file(MAKE_DIRECTORY ${WORK})

# run(BIN INPUT WANT_FAIL MATCH): BIN INPUT fails (or passes) and its stderr matches MATCH.
function(run bin input want_fail match)
  execute_process(COMMAND ${bin} ${input} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
  if((want_fail AND rc EQUAL 0) OR (NOT want_fail AND NOT rc EQUAL 0) OR NOT out MATCHES "${match}")
    message(FATAL_ERROR "${bin} ${input}: exit ${rc}, want ${want_fail} (1: a failure) and '${match}':\n${out}")
  endif()
endfunction()

# build_c(C EXE WRAPDEF SYMS): compile the C file C with -Werror into EXE against the correct library, linked with
# the wrap WRAPDEF around SYMS (none: the library alone).
function(build_c c exe def syms)
  set(extra "")
  if(NOT def STREQUAL "none")
    set(extra ${SRC}/tests/harness_wrap.c -DWRAP_${def}=1 -Wl,--wrap=${syms})
  endif()
  execute_process(COMMAND ${CC} -std=gnu11 -Wall -Wextra -Werror -I${SRC}/allocator/include ${c} ${extra} ${LIB}
                          -lpthread -latomic -o ${exe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "${c} (${def}) does not compile:\n${out}")
  endif()
endfunction()

# c_run(T INPUT WRAPDEF SYMS STATUS MATCH): the C file the correct fuzz_T writes for INPUT, linked with the
# wrap WRAPDEF (none: the correct library alone), exits STATUS and its stderr matches MATCH.
function(c_run t input def syms status match)
  get_filename_component(n ${input} NAME_WE)
  set(c ${WORK}/${t}-${n}.c)
  execute_process(COMMAND ${FUZZ_${t}} --c ${c} ${input} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "fuzz_${t} --c ${c} ${input}: exit ${rc}\n${err}")
  endif()
  set(exe ${WORK}/${t}-${n}-${def})
  build_c(${c} ${exe} ${def} "${syms}")
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
  if(NOT rc STREQUAL status OR NOT out MATCHES "${match}")
    message(FATAL_ERROR "${c} with ${def}: exit ${rc}, want ${status} and '${match}':\n${out}")
  endif()
endfunction()

# finding 6: a report raised during a sched op names that op.
file(WRITE ${WORK}/sched-report.txt "setup config=micro cpus=2 tasks=2\nalloc task=0 cache=2 cpu=0 zero=0\n"
     "free task=0 idx=0 cpu=0\nyield task=0 cpu=0\nyield task=1 cpu=1\nyield task=1 cpu=1\n")
run(${FUZZ_sched} ${WORK}/sched-report.txt 0 "replayed 1 inputs without a violation")
run(${WRAP_sched_report} ${WORK}/sched-report.txt 1
    "VIOLATION C1 in target sched, at op \\[1\\] free \\(of 5\\)\n==mmfuzz== C1: free \\(or an op of another task")

# t0 runs ops [2] and [3] before t1 runs [0] and [1]: the report of op [1] prints them (they ran), and its
# repro hint offers no --c.
file(WRITE ${WORK}/sched-order.txt "setup config=micro cpus=2 tasks=2\nalloc task=1 cache=2 cpu=0 zero=0\n"
     "free task=1 idx=0 cpu=0\nyield task=0 cpu=0\nyield task=0 cpu=1\n")
run(${WRAP_sched_report} ${WORK}/sched-order.txt 1
    "at op \\[1\\] free \\(of 4\\).*# \\[1\\] [^\n]*<== violation here\n[^\n]*# \\[2\\]\n[^\n]*# \\[3\\]\n.*input: [^\n]*sched-order.txt  \\(\\./mmfuzz repro sched [^;]*; \\./mmfuzz trace sched [^ ]*sched-order.txt\\)")

# finding 5: an interrupt left pending with no handler is dropped, not kept for later.
file(WRITE ${WORK}/pcp-pending.txt "setup config=tiny cpus=2 prefetch=0\nalloc order=0 gfp=GFP_KERNEL\n"
     "cpu_api kind=pending_no_handler arg=0\nalloc order=0 gfp=GFP_KERNEL\ncpu_api kind=stats arg=0\n")
run(${FUZZ_pcp} ${WORK}/pcp-pending.txt 0 "replayed 1 inputs without a violation")
run(${WRAP_pcp_pending} ${WORK}/pcp-pending.txt 1 "VIOLATION C1 in target pcp, at op \\[1\\] cpu_api")
c_run(pcp ${WORK}/pcp-pending.txt none "" 0 "no violation")
c_run(pcp ${WORK}/pcp-pending.txt PENDING_KEPT "mm_set_irq_pending,--wrap=mm_set_irq_handler" 1 "op 1: C1 violated")

# The options op asking for the locked fast path (findings 4 and 7).
string(CONCAT opts_locked "options debug=keep dflags=0 dlist=all dflags2=0 dlist2=all fastpath=locked hardened=keep random=keep "
                          "init_alloc=keep init_free=keep min_order=keep max_order=keep bad=none bad_last=0 min_objects=keep "
                          "fail_new_slab=keep seed=keep\n")

# fastpath(T REST): the options op asking for the locked fast path, then REST (op text). The input passes on the
# correct fuzz_T; fuzz_T linked with FASTPATH_IGNORED fails op [0], and so does the C file linked with that wrap
# (it exits 0 against the correct library). Finding 4 (slub: the C file repeats the options op's checks) and
# finding 7 (kmalloc's options op checks the fast path too, mf_slub_options_check() shared with slub).
function(fastpath t rest)
  set(in ${WORK}/${t}-fastpath.txt)
  file(WRITE ${in} "setup config=tiny cpus=2\n" "${opts_locked}" "${rest}")
  run(${FUZZ_${t}} ${in} 0 "replayed 1 inputs without a violation")
  run(${WRAP_${t}_fastpath} ${in} 1 "VIOLATION C1 in target ${t}, at op \\[0\\] options")
  c_run(${t} ${in} none "" 0 "no violation")
  c_run(${t} ${in} FASTPATH_IGNORED mm_slub_configure 1 "op 0: C1 violated")
endfunction()
fastpath(slub "create size=40 align=0 flags=0 ctor=0\nalloc cache=0 cpu=0 zero=0\n")
fastpath(kmalloc "alloc kind=kmalloc size=40 class=exact n=0 gfp=GFP_KERNEL cpu=0 overflow=0\n")

# finding 4: the C file repeats try_offline's "it is offline after".
file(WRITE ${WORK}/pcp-offline.txt "setup config=tiny cpus=3 prefetch=0\nalloc order=0 gfp=GFP_KERNEL\n"
     "cpu_api kind=try_offline arg=1\nalloc order=0 gfp=GFP_KERNEL\n")
c_run(pcp ${WORK}/pcp-offline.txt none "" 0 "no violation")
c_run(pcp ${WORK}/pcp-offline.txt OFFLINE_NOOP mm_cpu_try_offline 1 "op 1: C1 violated")

# MMFUZZ_STATS and MMFUZZ_CRASH_AT_OP reach sched too (its begin() runs the ops: mf_op_ran()).
set(ENV{MMFUZZ_STATS} 1)
run(${FUZZ_sched} ${WORK}/sched-report.txt 0 "mmfuzz: stats: 1 inputs, 5 ops \\(5.0 per input\\)")
unset(ENV{MMFUZZ_STATS})
set(ENV{MMFUZZ_CRASH_AT_OP} 1)
execute_process(COMMAND ${FUZZ_sched} ${WORK}/sched-report.txt RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
unset(ENV{MMFUZZ_CRASH_AT_OP})
if(NOT rc MATCHES "Segmentation")
  message(FATAL_ERROR "MMFUZZ_CRASH_AT_OP=1 fuzz_sched: ${rc}, want a SIGSEGV:\n${out}")
endif()

# fuzz_sched has no C reproducer: --c is refused (exit 2), nothing written (was: a truncated file, exit 0).
file(REMOVE ${WORK}/sched.c)
execute_process(COMMAND ${FUZZ_sched} --c ${WORK}/sched.c ${WORK}/sched-report.txt RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 2 OR EXISTS ${WORK}/sched.c OR NOT out MATCHES "target sched has no C reproducer")
  message(FATAL_ERROR "fuzz_sched --c: exit ${rc}, want 2, no file and a message:\n${out}")
endif()

# ---------------------------------------------------------------- a crash inside an allocator call
# crash(T BIN INPUT WRAPDEF SYMS SIG CALL): BIN (fuzz_T linked with the wrap WRAPDEF) dies of SIG (a regex on
# execute_process's result) writing the C file of INPUT, whose last op ends with CALL (a regex) marked as the call
# in flight; the C file compiles and dies of SIG linked with the same wrap, and exits 0 ("did not reproduce")
# against the correct library.  Without the call registered (mf_cgen_call()) the C file leaves it out and runs
# to its end against the wrap as well.
function(crash t bin input def syms sig call)
  run(${FUZZ_${t}} ${input} 0 "replayed 1 inputs without a violation")
  get_filename_component(n ${input} NAME_WE)
  set(c ${WORK}/${n}.c)
  file(REMOVE ${c})
  execute_process(COMMAND ${bin} --c ${c} ${input} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
  if(NOT rc MATCHES "${sig}" OR NOT EXISTS ${c})
    message(FATAL_ERROR "${bin} --c ${c} ${input}: '${rc}', want a death matching '${sig}' and a C file:\n${out}")
  endif()
  file(READ ${c} text)
  if(NOT text MATCHES "\n\t${call}   /\\* the call in flight when the fuzz run stopped \\*/\n\t/\\* The fuzz run stopped here: crash: ")
    message(FATAL_ERROR "${c}: its last op should end with '${call}' as the call in flight:\n${text}")
  endif()
  foreach(x ${def} none)
    set(exe ${WORK}/${n}-${x})
    build_c(${c} ${exe} ${x} "${syms}")
    execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
    if(x STREQUAL "none" AND (NOT rc EQUAL 0 OR NOT out MATCHES "the violation the fuzz run saw \\(crash\\) did not reproduce here"))
      message(FATAL_ERROR "${c} against the correct library: '${rc}', want 0 and 'did not reproduce':\n${out}")
    elseif(NOT x STREQUAL "none" AND NOT rc MATCHES "${sig}")
      message(FATAL_ERROR "${c} with ${x}: '${rc}', want a death matching '${sig}' as the fuzz run's:\n${out}")
    endif()
  endforeach()
endfunction()

file(WRITE ${WORK}/bulk-crash-array.txt "setup config=tiny cpus=2\nalloc order=0 gfp=GFP_KERNEL\n"
     "bulk_array n=4 fill=0x1 gfp=GFP_KERNEL heap=0\nbulk_array n=13 fill=0x5 gfp=GFP_KERNEL heap=0\n")
crash(bulk ${WRAP_bulk_crash} ${WORK}/bulk-crash-array.txt CRASH_BULK __alloc_pages_bulk "Segmentation"
      "nret = __alloc_pages_bulk\\(mm, 0x[0-9a-f]+, 13, NULL, arr\\);")
file(WRITE ${WORK}/bulk-crash-list.txt "setup config=tiny cpus=2\nbulk_list n=5 gfp=GFP_KERNEL k=0\n"
     "bulk_list n=13 gfp=GFP_ATOMIC k=2\n")
crash(bulk ${WRAP_bulk_crash} ${WORK}/bulk-crash-list.txt CRASH_BULK __alloc_pages_bulk "Segmentation"
      "nret = __alloc_pages_bulk\\(mm, 0x[0-9a-f]+, 13, &lhead, NULL\\);")
file(WRITE ${WORK}/pcp-crash.txt "setup config=tiny cpus=2 prefetch=0\nalloc order=0 gfp=GFP_KERNEL\n"
     "drain_all zone=all\npcp_update high=77 batch=7\n")
crash(pcp ${WRAP_pcp_crash} ${WORK}/pcp-crash.txt CRASH_PCP "mm_pcp_update,--wrap=alloc_pages" "abort"
      "\\(void\\)mm_pcp_update\\(mm, 77, 7\\);")
# Inside the interrupt handler, which the injection ran inside the task's alloc_pages: both calls in flight,
# the handler's in its script (irq_script(), its block closed), the task's in main().
file(WRITE ${WORK}/pcp-crash-irq.txt "setup config=tiny cpus=2 prefetch=0\nalloc order=1 gfp=GFP_KERNEL\n"
     "inject plan=0x1 n=1 irq=0x1 order=3\nalloc order=0 gfp=GFP_KERNEL\n")
crash(pcp ${WRAP_pcp_crash} ${WORK}/pcp-crash-irq.txt CRASH_PCP "mm_pcp_update,--wrap=alloc_pages" "abort"
      "\\(void\\)alloc_pages\\(mm, 0x[0-9a-f]+, 0\\);")
file(READ ${WORK}/pcp-crash-irq.c text)
if(NOT text MATCHES "\tcase 1:\n\t{\n\t\\(void\\)alloc_pages\\(mm, 0x[0-9a-f]+, 3\\);   /\\* the call in flight when the fuzz run stopped \\*/\n\t}\n\t\tbreak;")
  message(FATAL_ERROR "${WORK}/pcp-crash-irq.c: the handler's run 1 should be its order-3 alloc_pages in flight, "
                      "its block closed:\n${text}")
endif()
file(WRITE ${WORK}/slub-crash-create.txt "setup config=tiny cpus=2\ncreate size=40 align=0 flags=0 ctor=0\n"
     "alloc cache=0 cpu=0 zero=0\ncreate size=77 align=0 flags=0 ctor=0\n")
crash(slub ${WRAP_slub_crash} ${WORK}/slub-crash-create.txt CRASH_SLUB "kmem_cache_create,--wrap=kmem_cache_shrink"
      "abort" "\\(void\\)kmem_cache_create\\(mm, \"fz1\", 77, 0, 0, NULL\\);")
file(WRITE ${WORK}/slub-crash-shrink.txt "setup config=tiny cpus=2\ncreate size=88 align=0 flags=0 ctor=0\n"
     "alloc cache=0 cpu=1 zero=0\nshrink cache=0 cpu=0\n")
crash(slub ${WRAP_slub_crash} ${WORK}/slub-crash-shrink.txt CRASH_SLUB "kmem_cache_create,--wrap=kmem_cache_shrink"
      "Segmentation" "kmem_cache_shrink\\(caches\\[0\\]\\);")
file(WRITE ${WORK}/config-crash.txt "setup base=micro\ncpus n=2\nvalidate errlen=300\ncpus n=7\nvalidate errlen=40\n")
crash(config ${WRAP_config_crash} ${WORK}/config-crash.txt CRASH_CONFIG mm_config_validate "Segmentation"
      "validate\\(3, 40, 0\\);")

# A crash ending inside two blocks of main(): the ending closes both (braces in comments, literals and a line comment
# not counted), so the file compiles; the wrap only writes the blocks, so the C file runs to its end.
file(WRITE ${WORK}/pcp-block.txt "setup config=tiny cpus=2 prefetch=0\nalloc order=0 gfp=GFP_KERNEL\n"
     "pcp_update high=66 batch=7\n")
run(${FUZZ_pcp} ${WORK}/pcp-block.txt 0 "replayed 1 inputs without a violation")
file(REMOVE ${WORK}/pcp-block.c)
execute_process(COMMAND ${WRAP_pcp_block} --c ${WORK}/pcp-block.c ${WORK}/pcp-block.txt RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
if(NOT rc MATCHES "abort" OR NOT EXISTS ${WORK}/pcp-block.c)
  message(FATAL_ERROR "${WRAP_pcp_block} --c: '${rc}', want an abort and a C file:\n${out}")
endif()
file(READ ${WORK}/pcp-block.c text)
string(FIND "${text}" "/* { */\n\t}\n\t}\n\t/* The fuzz run stopped here: crash: " at)
if(at EQUAL -1)
  message(FATAL_ERROR "${WORK}/pcp-block.c: the two blocks written should be closed, then the ending:\n${text}")
endif()
build_c(${WORK}/pcp-block.c ${WORK}/pcp-block none "")
execute_process(COMMAND ${WORK}/pcp-block RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)
if(NOT rc EQUAL 0 OR NOT out MATCHES "the violation the fuzz run saw \\(crash\\) did not reproduce here")
  message(FATAL_ERROR "${WORK}/pcp-block: '${rc}', want 0 and 'did not reproduce':\n${out}")
endif()

message("HARNESS-WRAP-OK")
