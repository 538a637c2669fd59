#!/usr/bin/env bash
# Builds the `velero` CLI of the pinned Velero release from the Go module proxy into
# ~/.cache/cairn/bin/velero-<ver>/velero, for measuring and checking cairn beside it (bench:cli). The build runs
# once; later calls find the binary and only print its path. It builds inside Velero's own module, so its go.mod's
# `replace` of github.com/kopia/kopia by the project-velero fork applies (that fork's go.mod names itself
# github.com/kopia/kopia, so the checksum database does not know it and is not asked for it).
set -euo pipefail
VELERO_VERSION="${VELERO_VERSION:-v1.17.2}"
source "$(dirname "${BASH_SOURCE[0]}")/go-module.sh"
peer_begin install-velero velero "$VELERO_VERSION"
export GONOSUMDB=github.com/project-velero/kopia
SRC_DIR="$(peer_module_dir install-velero "github.com/vmware-tanzu/velero@$VELERO_VERSION")"
(cd "$SRC_DIR" && "$GO" build -trimpath -ldflags "-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=$VELERO_VERSION" \
  -o "$BIN_DIR/velero.tmp" ./cmd/velero)
mv "$BIN_DIR/velero.tmp" "$BIN_DIR/velero"
"$BIN_DIR/velero" version --client-only >&2
echo "$BIN_DIR/velero"
