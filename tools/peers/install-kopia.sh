#!/usr/bin/env bash
# Builds the pinned kopia release from the Go module proxy into ~/.cache/cairn/bin/kopia-<ver>/kopia.
# The build runs once; later calls find the binary and only print its path.
# Pin: the newest kopia release that builds with the Go toolchain on this machine (go 1.26).
# `--velero` builds the kopia Velero v1.17 bundles instead: the project-velero fork of kopia 0.16 that Velero's
# go.mod replaces github.com/kopia/kopia with (its go.mod says module github.com/kopia/kopia, so the checksum
# database does not know it and is not asked for it).
set -euo pipefail
KOPIA_MODULE="${KOPIA_MODULE:-github.com/kopia/kopia}"
KOPIA_VERSION="${KOPIA_VERSION:-v0.23.1}"
if [[ "${1:-}" == "--velero" ]]; then
  KOPIA_MODULE=github.com/project-velero/kopia
  KOPIA_VERSION=v0.0.0-20250722052735-3ea24d208777
fi
source "$(dirname "${BASH_SOURCE[0]}")/go-module.sh"
peer_begin install-kopia kopia "$KOPIA_VERSION"
if [[ "$KOPIA_MODULE" != github.com/kopia/kopia ]]; then export GONOSUMDB="$KOPIA_MODULE"; fi
SRC_DIR="$(peer_module_dir install-kopia "$KOPIA_MODULE@$KOPIA_VERSION")"
(cd "$SRC_DIR" && "$GO" build -trimpath -ldflags "-X github.com/kopia/kopia/repo.BuildVersion=${KOPIA_VERSION#v}" \
  -o "$BIN_DIR/kopia.tmp" .)
mv "$BIN_DIR/kopia.tmp" "$BIN_DIR/kopia"
"$BIN_DIR/kopia" --version >&2
echo "$BIN_DIR/kopia"
