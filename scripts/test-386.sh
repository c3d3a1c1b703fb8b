#!/usr/bin/env bash
# The receiver's unit tests for a 32-bit platform (GOARCH=386, where int is
# 32 bits), run from the receiver's module directory (the Makefile's
# unit-test target). A 386 test binary runs only where the kernel executes
# 32-bit x86 programs (IA32 emulation): some VM kernels do not ("exec format
# error"), and qemu-user cannot run Go binaries ("fatal: bad g in signal
# handler"). On such a machine the tests are compiled and vetted for 386,
# which catches what the compiler and vet see (constants that overflow a
# 32-bit int, conversions, types) but not what only a run shows, and a line
# on stderr says that they were not run; the exit status is that of the
# build and vet. GO names the go command (default go).
set -euo pipefail

go=${GO:-go}
out=$(mktemp -d "${TMPDIR:-/tmp}/test-386.XXXXXX")
trap 'rm -rf "$out"' EXIT

# Every package's test binary, built for 386 (packages without tests build
# none).
GOARCH=386 "$go" test -c -o "$out/" ./...
# One of them, run with no test selected: the shell's status 126 is "cannot
# execute" (exec format error); anything else, the tests run (and fail
# visibly if something else is wrong).
probe=$(find "$out" -name '*.test' -print -quit)
status=0
"$probe" -test.run '^$' >/dev/null 2>&1 || status=$?
if [[ $status -ne 126 ]]; then
	GOARCH=386 "$go" test ./...
else
	GOARCH=386 "$go" vet ./...
	echo "test-386: this kernel cannot execute 32-bit x86 programs; the receiver's GOARCH=386 tests were built and vetted but NOT run" >&2
fi
