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
CACHE="${CAIRN_CACHE:-$HOME/.cache/cairn}"
BIN_DIR="$CACHE/bin/kopia-$KOPIA_VERSION"
if [[ -x "$BIN_DIR/kopia" ]]; then
  echo "$BIN_DIR/kopia"
  exit 0
fi
# Go: $GO, else the one on PATH, else the toolchain the test bed fetches from the module proxy when a machine has none.
GO="${GO:-$(command -v go || true)}"
if [[ -z "$GO" ]]; then
  GO="$(ls -d "$CACHE"/go/toolchain/golang.org/toolchain@*/bin/go 2>/dev/null | sort | tail -n 1 || true)"
fi
if [[ -z "$GO" || ! -x "$GO" ]]; then
  echo "install-kopia: no Go toolchain; install Go or run 'node --import tsx tools/local-cluster/cli.ts setup' first" >&2
  exit 1
fi
mkdir -p "$BIN_DIR"
# GOTOOLCHAIN=local: never download a toolchain; the release's go.mod asks for 1.25, older than ours.
# `go install pkg@ver` would also ask the proxy for the module's version list (to warn about deprecation),
# which this machine's proxy refuses; so download the pinned module and build it inside its own module.
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
if [[ "$KOPIA_MODULE" != github.com/kopia/kopia ]]; then export GONOSUMDB="$KOPIA_MODULE"; fi
SRC_DIR="$("$GO" mod download -json "$KOPIA_MODULE@$KOPIA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$SRC_DIR" ]] || { echo "install-kopia: download of kopia $KOPIA_VERSION failed" >&2; exit 1; }
(cd "$SRC_DIR" && "$GO" build -trimpath -ldflags "-X github.com/kopia/kopia/repo.BuildVersion=${KOPIA_VERSION#v}" \
  -o "$BIN_DIR/kopia.tmp" .)
mv "$BIN_DIR/kopia.tmp" "$BIN_DIR/kopia"
"$BIN_DIR/kopia" --version >&2
echo "$BIN_DIR/kopia"
