#!/usr/bin/env bash
# Builds the `velero` CLI of the pinned Velero release from the Go module proxy into
# ~/.cache/cairn/bin/velero-<ver>/velero, for measuring and checking cairn beside it (bench:cli). The build runs
# once; later calls find the binary and only print its path. It builds inside Velero's own module, so its go.mod's
# `replace` of github.com/kopia/kopia by the project-velero fork applies (that fork's go.mod names itself
# github.com/kopia/kopia, so the checksum database does not know it and is not asked for it).
set -euo pipefail
VELERO_VERSION="${VELERO_VERSION:-v1.17.2}"
CACHE="${CAIRN_CACHE:-$HOME/.cache/cairn}"
BIN_DIR="$CACHE/bin/velero-$VELERO_VERSION"
if [[ -x "$BIN_DIR/velero" ]]; then
  echo "$BIN_DIR/velero"
  exit 0
fi
# Go: $GO, else the one on PATH, else the toolchain the test bed fetches from the module proxy when a machine has none.
GO="${GO:-$(command -v go || true)}"
if [[ -z "$GO" ]]; then
  GO="$(ls -d "$CACHE"/go/toolchain/golang.org/toolchain@*/bin/go 2>/dev/null | sort | tail -n 1 || true)"
fi
if [[ -z "$GO" || ! -x "$GO" ]]; then
  echo "install-velero: no Go toolchain; install Go or run 'node --import tsx tools/local-cluster/cli.ts setup' first" >&2
  exit 1
fi
mkdir -p "$BIN_DIR"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GONOSUMDB=github.com/project-velero/kopia
SRC_DIR="$("$GO" mod download -json "github.com/vmware-tanzu/velero@$VELERO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$SRC_DIR" ]] || { echo "install-velero: download of velero $VELERO_VERSION failed" >&2; exit 1; }
(cd "$SRC_DIR" && "$GO" build -trimpath -ldflags "-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=$VELERO_VERSION" \
  -o "$BIN_DIR/velero.tmp" ./cmd/velero)
mv "$BIN_DIR/velero.tmp" "$BIN_DIR/velero"
"$BIN_DIR/velero" version --client-only >&2
echo "$BIN_DIR/velero"
