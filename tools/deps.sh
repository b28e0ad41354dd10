#!/usr/bin/env bash
# help: check (and, as root with apt-get, install) what mmfuzz needs to build and run
#
# Usage, as a script:   tools/deps.sh [core|afl|all]     (default: core)
# Usage, sourced:       source tools/deps.sh; deps_core || exit $?; deps_afl || exit $?
#
#   deps_core  cmake >= 3.21 (presets v3), ninja, gcc, clang with its sanitizer
#              and libFuzzer runtimes, llvm tools (llvm-symbolizer for readable
#              sanitizer reports, llvm-cov / llvm-profdata for coverage), python3.
#   deps_afl   AFL++ (afl-clang-fast, afl-fuzz), for the afl preset and engine.
#
# Everything present: silent, returns 0, a few milliseconds.  Something
# missing: as root with apt-get, one `apt-get update`, then `apt-get install`
# of the Debian packages, saying what it does (on stderr).  Otherwise a message
# naming each missing tool and the package that provides it; returns 2.
#
# MMFUZZ_NO_INSTALL=1 turns installing off (check only).

# Debian package providing each tool.
declare -gA DEPS_PKG=(
	[cmake]=cmake
	[ninja]=ninja-build
	[gcc]=gcc
	[clang]=clang
	[llvm-symbolizer]=llvm
	[llvm-cov]=llvm
	[llvm-profdata]=llvm
	[python3]=python3
	[afl-clang-fast]=afl++
	[afl-fuzz]=afl++
)
DEPS_APT_UPDATED=${DEPS_APT_UPDATED:-0}

deps__say() { printf 'mmfuzz deps: %s\n' "$*" >&2; }

deps__can_install() {
	[[ ${MMFUZZ_NO_INSTALL:-0} != 1 ]] && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1
}

# deps__apt_install PKG...: one apt-get update per process, then install.
deps__apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	if [[ $DEPS_APT_UPDATED != 1 ]]; then
		deps__say "running: apt-get update"
		if ! apt-get update -qq >&2; then
			deps__say "apt-get update failed"
			return 1
		fi
		DEPS_APT_UPDATED=1
	fi
	deps__say "running: apt-get install -y --no-install-recommends $*"
	apt-get install -y -qq --no-install-recommends "$@" >&2
}

# deps__missing_msg TOOL...: name each missing tool and its package.
deps__missing_msg() {
	local t pkgs=()
	for t in "$@"; do
		deps__say "missing: $t (Debian package: ${DEPS_PKG[$t]:-$t})"
		pkgs+=("${DEPS_PKG[$t]:-$t}")
	done
	deps__say "install them with: apt-get install $(printf '%s\n' "${pkgs[@]}" | sort -u | tr '\n' ' ')"
}

# deps__ensure_tools TOOL...: install the packages of the missing ones.
deps__ensure_tools() {
	local t missing=() pkgs=()
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	((${#missing[@]} == 0)) && return 0
	if deps__can_install; then
		for t in "${missing[@]}"; do pkgs+=("${DEPS_PKG[$t]:-$t}"); done
		# shellcheck disable=SC2046
		deps__apt_install $(printf '%s\n' "${pkgs[@]}" | sort -u) || true
		local still=()
		for t in "${missing[@]}"; do
			command -v "$t" >/dev/null 2>&1 || still+=("$t")
		done
		missing=("${still[@]}")
		((${#missing[@]} == 0)) && return 0
	fi
	deps__missing_msg "${missing[@]}"
	[[ $(id -u) != 0 ]] && deps__say "(not root: run as root, or install them yourself)"
	return 2
}

# cmake >= 3.21: CMakePresets.json version 3.
deps__cmake_ok() {
	local v maj min
	v=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	[[ -n $v ]] || return 1
	read -r maj min <<<"$v"
	((maj > 3 || (maj == 3 && min >= 21)))
}

# The clang runtimes the presets link: ASan, UBSan, TSan, libFuzzer.
# Prints the first missing one; returns 1 if any is missing.
deps__clang_rt_missing() {
	local dir arch rt
	dir=$(clang -print-runtime-dir 2>/dev/null)
	arch=$(uname -m)
	for rt in asan ubsan_standalone tsan fuzzer; do
		# clang <= 14: lib/linux/libclang_rt.X-ARCH.a; newer: lib/TRIPLE/libclang_rt.X.a
		if [[ ! -e $dir/libclang_rt.$rt-$arch.a && ! -e $dir/libclang_rt.$rt.a ]]; then
			echo "libclang_rt.$rt-$arch.a (in ${dir:-the clang runtime dir})"
			return 1
		fi
	done
	return 0
}

deps_core() {
	deps__ensure_tools cmake ninja gcc clang llvm-symbolizer llvm-cov llvm-profdata python3 || return $?

	if ! deps__cmake_ok; then
		deps__say "cmake $(cmake --version | sed -n '1s/^cmake version //p') is too old: mmfuzz needs >= 3.21 (CMakePresets.json v3)"
		if deps__can_install; then
			deps__apt_install cmake || true
			deps__cmake_ok && return 0
		fi
		deps__say "install a newer cmake (Debian 12 ships 3.25: apt-get install cmake)"
		return 2
	fi

	local miss major pkg
	if ! miss=$(deps__clang_rt_missing); then
		major=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
		pkg="libclang-rt-${major}-dev"
		deps__say "missing clang runtime: $miss"
		if deps__can_install; then
			deps__apt_install "$pkg" || true
			miss=$(deps__clang_rt_missing) && return 0
		fi
		deps__say "missing: clang's sanitizer/libFuzzer runtimes (Debian package: $pkg)"
		return 2
	fi

	if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null; then
		deps__say "python3 >= 3.7 is needed (Debian package: python3)"
		return 2
	fi
	return 0
}

# AFL++ from Debian's package; for the afl preset and `fuzz --engine afl`.
deps_afl() {
	deps__ensure_tools afl-clang-fast afl-fuzz
}

deps_all() {
	deps_core || return $?
	deps_afl
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	if (($# > 1)); then
		# the rest was ignored: `tools/deps.sh core afl` checked core only, and said nothing
		echo "tools/deps.sh: one of core, afl, all (not: $*)" >&2
		echo "usage: tools/deps.sh [core|afl|all]" >&2
		exit 2
	fi
	case ${1:-core} in
	core) deps_core ;;
	afl) deps_afl ;;
	all) deps_all ;;
	-h | --help | help)
		sed -n '4,16s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "usage: tools/deps.sh [core|afl|all]" >&2
		exit 2
		;;
	esac
	exit $?
fi
