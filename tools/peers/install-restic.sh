#!/usr/bin/env bash
# Installs restic from Debian (the peer most Velero users know). Skips when restic is already present.
set -euo pipefail
if ! command -v restic >/dev/null; then
  SUDO=""; [[ "$(id -u)" == 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq restic >&2
fi
restic version >&2
command -v restic
