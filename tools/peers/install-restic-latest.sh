#!/usr/bin/env bash
# Builds the newest restic release from the Go module proxy into ~/.cache/cairn/bin/restic-<ver>/restic, beside
# Debian's older restic (install-restic.sh). The build runs once; later calls find the binary and only print its path.
set -euo pipefail
RESTIC_VERSION="${RESTIC_VERSION:-v0.19.1}"
source "$(dirname "${BASH_SOURCE[0]}")/go-module.sh"
peer_begin install-restic-latest restic "$RESTIC_VERSION"
SRC_DIR="$(peer_module_dir install-restic-latest "github.com/restic/restic@$RESTIC_VERSION")"
(cd "$SRC_DIR" && "$GO" build -trimpath -o "$BIN_DIR/restic.tmp" ./cmd/restic)
mv "$BIN_DIR/restic.tmp" "$BIN_DIR/restic"
"$BIN_DIR/restic" version >&2
echo "$BIN_DIR/restic"
