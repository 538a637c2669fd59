#!/usr/bin/env bash
# Builds the newest restic release from the Go module proxy into ~/.cache/cairn/bin/restic-<ver>/restic, beside
# Debian's older restic (install-restic.sh). The build runs once; later calls find the binary and only print its path.
set -euo pipefail
RESTIC_VERSION="${RESTIC_VERSION:-v0.19.1}"
CACHE="${CAIRN_CACHE:-$HOME/.cache/cairn}"
BIN_DIR="$CACHE/bin/restic-$RESTIC_VERSION"
if [[ -x "$BIN_DIR/restic" ]]; then
  echo "$BIN_DIR/restic"
  exit 0
fi
# Go: $GO, else the one on PATH, else the toolchain the test bed fetches from the module proxy when a machine has none.
GO="${GO:-$(command -v go || true)}"
if [[ -z "$GO" ]]; then
  GO="$(ls -d "$CACHE"/go/toolchain/golang.org/toolchain@*/bin/go 2>/dev/null | sort | tail -n 1 || true)"
fi
if [[ -z "$GO" || ! -x "$GO" ]]; then
  echo "install-restic-latest: no Go toolchain; install Go or run 'node --import tsx tools/local-cluster/cli.ts setup' first" >&2
  exit 1
fi
mkdir -p "$BIN_DIR"
# As install-kopia.sh: no toolchain download, and build inside the downloaded module (the proxy here refuses the
# version list that `go install pkg@version` asks for).
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
SRC_DIR="$("$GO" mod download -json "github.com/restic/restic@$RESTIC_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$SRC_DIR" ]] || { echo "install-restic-latest: download of restic $RESTIC_VERSION failed" >&2; exit 1; }
(cd "$SRC_DIR" && "$GO" build -trimpath -o "$BIN_DIR/restic.tmp" ./cmd/restic)
mv "$BIN_DIR/restic.tmp" "$BIN_DIR/restic"
"$BIN_DIR/restic" version >&2
echo "$BIN_DIR/restic"
