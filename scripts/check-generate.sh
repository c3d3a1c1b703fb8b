#!/usr/bin/env bash
# Regenerates the code of this repository's components (mdatagen, via
# `go generate`: the two receivers, the four exporters and the queue storage extension; and the
# simulator's copies of the receiver's LIF counter names and device keys) and
# fails when that changed anything under them: the generated code in the tree
# is not current with metadata.yaml. Each folder's `go generate` runs
# mdatagen through the `tool` directive of its module: the receiver's own
# go.mod (receiver/ernicreceiver is a module of its own; mdatagen also fills
# the status table of its README.md), the root go.mod for the exporters.
#
# In a clean checkout (CI) this is exactly "git status --porcelain
# receiver/ernicreceiver is empty after generating". In a working tree with
# uncommitted edits it compares the files' contents before and after
# generating, so edits in progress are not mistaken for stale generated code.
set -euo pipefail

cd "$(dirname "$0")/.."
dirs=(receiver/ernicreceiver receiver/selftelemetryreceiver exporter/remotewriteexporter exporter/prometheustextexporter exporter/otlpdurableexporter exporter/otlphttpdurableexporter extension/queuestorageextension internal/sim)

snapshot() {
	# Path and content hash of every file under $dir (tracked or not).
	find "${dirs[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
}

clean_before=$(git status --porcelain -- "${dirs[@]}")
before=$(snapshot)
for dir in "${dirs[@]}"; do
	(cd "$dir" && go generate ./...)
done
after=$(snapshot)
status=$(git status --porcelain -- "${dirs[@]}")

if [[ -z "$clean_before" && -n "$status" ]] || [[ "$before" != "$after" ]]; then
	echo "check-generate: generated code under ${dirs[*]} is not current with metadata.yaml." >&2
	echo "Run 'make generate' and commit the result. Changed files:" >&2
	diff <(echo "$before") <(echo "$after") | sed -n 's/^[<>] [0-9a-f]*  //p' | sort -u >&2 || true
	git status --porcelain -- "${dirs[@]}" >&2
	exit 1
fi
echo "check-generate: generated code is current."
