# Sourced by the install-*.sh scripts that build a peer tool from the Go module proxy (kopia, restic, velero).
# `peer_begin NAME TOOL VERSION` sets BIN_DIR (~/.cache/cairn/bin/TOOL-VERSION) and, when the tool is built there
# already, prints its path and ends the script; otherwise it finds Go (peer_go), creates BIN_DIR and takes its build
# lock, so that concurrent callers build the tool once.
# `peer_go NAME` sets GO: $GO, else the go on PATH, else the toolchain the test bed fetches from the module proxy when
# a machine has none; and exports what every such build needs: never download a toolchain (GOTOOLCHAIN=local), no VCS
# stamping. `peer_module_dir NAME MODULE@VERSION` downloads a module and prints its directory: the tools are built
# inside their own module, because `go install pkg@version` would ask the proxy for the module's version list, which
# this machine's proxy refuses, and because only a main module's `replace` directives apply.
peer_go() {
  GO="${GO:-$(command -v go || true)}"
  if [[ -z "$GO" ]]; then
    GO="$(ls -d "${CAIRN_CACHE:-$HOME/.cache/cairn}"/go/toolchain/golang.org/toolchain@*/bin/go 2>/dev/null | sort | tail -n 1 || true)"
  fi
  if [[ -z "$GO" || ! -x "$GO" ]]; then
    echo "$1: no Go toolchain; install Go or run 'node --import tsx tools/local-cluster/cli.ts setup' first" >&2
    exit 1
  fi
  export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
}

peer_module_dir() {
  local dir
  dir="$("$GO" mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$dir" ]] || { echo "$1: download of $2 failed" >&2; exit 1; }
  echo "$dir"
}

peer_begin() {
  BIN_DIR="${CAIRN_CACHE:-$HOME/.cache/cairn}/bin/$2-$3"
  if [[ -x "$BIN_DIR/$2" ]]; then
    echo "$BIN_DIR/$2"
    exit 0
  fi
  peer_go "$1"
  mkdir -p "$BIN_DIR"
  # On a cold cache two test tiers running side by side may ask for the same tool at once: one builds it (the lock is
  # held until the script ends), the other waits and then finds it built.
  exec 9>"$BIN_DIR/.build.lock"
  flock 9
  if [[ -x "$BIN_DIR/$2" ]]; then
    echo "$BIN_DIR/$2"
    exit 0
  fi
}
