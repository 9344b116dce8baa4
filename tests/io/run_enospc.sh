#!/bin/sh
# Runs test_io_enospc on a 256 KiB tmpfs mounted in a private mount namespace (it vanishes with the process, so
# nothing is left mounted). Needs unshare and either root or unprivileged user namespaces; skips (77) otherwise.
# Usage: run_enospc.sh TEST_PROGRAM MOUNTPOINT
prog=$1
mnt=$2
mkdir -p "$mnt" || exit 1
if [ "$(id -u)" = 0 ]; then ns="--mount"; else ns="--user --map-root-user --mount"; fi
# shellcheck disable=SC2086
if ! unshare $ns true 2>/dev/null; then
  echo "skipped: cannot make a private mount namespace here (unshare $ns)"
  exit 77
fi
# shellcheck disable=SC2086
exec unshare $ns sh -c '
  mount -t tmpfs -o size=256k tmpfs "$2" 2>/dev/null || { echo "skipped: cannot mount a small tmpfs"; exit 77; }
  exec "$1" "$2"' sh "$prog" "$mnt"
