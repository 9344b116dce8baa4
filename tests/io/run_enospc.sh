#!/bin/sh
# Runs COMMAND [ARGS...] MOUNTPOINT with a tmpfs of SIZE mounted at MOUNTPOINT in a private mount namespace (it
# vanishes with the process, so nothing is left mounted): a small file system that fills up. Needs unshare and
# either root or unprivileged user namespaces; skips (77) otherwise.
# Usage: run_enospc.sh SIZE MOUNTPOINT COMMAND [ARGS...]      (SIZE as mount takes it: 256k, 2m)
size=$1
mnt=$2
shift 2
mkdir -p "$mnt" || exit 1
if [ "$(id -u)" = 0 ]; then ns="--mount"; else ns="--user --map-root-user --mount"; fi
# shellcheck disable=SC2086
if ! unshare $ns true 2>/dev/null; then
  echo "skipped: cannot make a private mount namespace here (unshare $ns)"
  exit 77
fi
# shellcheck disable=SC2086
exec unshare $ns sh -c '
  size=$1 mnt=$2
  shift 2
  mount -t tmpfs -o size="$size" tmpfs "$mnt" 2>/dev/null || { echo "skipped: cannot mount a small tmpfs"; exit 77; }
  exec "$@" "$mnt"' sh "$size" "$mnt" "$@"
