#!/usr/bin/env bash
# Checks that every hand-written Go file of the repository opens with the
# project's license header (make lint), as contrib's lint does with its
# own:
#   // Copyright The otelcol-ernic Authors
#   // SPDX-License-Identifier: Apache-2.0
# Generated files (a "Code generated ... DO NOT EDIT." line) are left out.
# With --fix it adds the header where it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

header=$'// Copyright The otelcol-ernic Authors\n// SPDX-License-Identifier: Apache-2.0'
fix=false
[[ ${1:-} == --fix ]] && fix=true
missing=()
while IFS= read -r f; do
	grep -q '^// Code generated .* DO NOT EDIT\.$' "$f" && continue
	[[ $(head -c ${#header} "$f") == "$header" ]] && continue
	if $fix; then
		{ printf '%s\n\n' "$header"; cat "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
	else
		missing+=("$f")
	fi
done < <(git ls-files --cached --others --exclude-standard '*.go')
if ((${#missing[@]})); then
	printf 'missing the license header (scripts/check-headers.sh --fix adds it):\n' >&2
	printf '  %s\n' "${missing[@]}" >&2
	exit 1
fi
