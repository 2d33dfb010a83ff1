#!/usr/bin/env bash
# Runs a command (default: npm test) on what a newcomer's machine has: Node and npm, and
# nothing else. In a new network namespace (only loopback, so no PostgreSQL or Redis
# listening) and a new mount namespace where /usr/bin lists everything except chromium,
# psql, pg_* and redis-*, and /usr/lib/postgresql is empty; CI and the database and Redis
# variables unset. Needs root and unshare; without them it prints one line and exits 0.
# Usage: scripts/bare-machine.sh [command...]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null || ! unshare -n -m true 2> /dev/null; then
  echo "SKIPPED bare-machine gate: needs root and unshare -n -m (util-linux); run it as root on Linux"
  exit 0
fi

[ $# -gt 0 ] || set -- npm test

exec unshare -n -m --propagation private env -u CI -u DATABASE_URL -u TEST_DATABASE_URL -u DATABASE_READ_URL \
  -u REDIS_URL -u TEST_REDIS_URL -u TEST_CHROMIUM bash -c '
set -euo pipefail
ip link set lo up
# The real /usr/bin stays reachable under a private path, and a folder of links to all
# of it but the hidden programs is mounted over /usr/bin. (Links to /usr/bin itself would
# point at themselves once the folder is mounted over it.)
farm=$(mktemp -d /tmp/bare-machine.XXXXXX)
# Readable by all: the postgres user runs programs through these links too.
chmod 755 "$farm"
mkdir "$farm/real" "$farm/bin"
mount --bind /usr/bin "$farm/real"
for file in "$farm"/real/*; do
  name=${file##*/}
  case "$name" in
    chromium* | psql | pg_* | redis-*) ;;
    *)
      # A relative link leading out of the folder (npm -> ../lib/node_modules/...) keeps
      # its meaning from /usr/bin; anything else goes through the real folder.
      target=$(readlink "$file" || true)
      case "$target" in
        */* ) case "$target" in /*) ln -s "$target" "$farm/bin/$name" ;; *) ln -s "/usr/bin/$target" "$farm/bin/$name" ;; esac ;;
        *) ln -s "$file" "$farm/bin/$name" ;;
      esac ;;
  esac
done
mount --bind "$farm/bin" /usr/bin
[ -d /usr/lib/postgresql ] && mount -t tmpfs tmpfs /usr/lib/postgresql
for hidden in chromium psql pg_basebackup redis-server; do
  if command -v "$hidden" > /dev/null; then echo "bare-machine: $hidden is still visible" >&2; exit 1; fi
done
[ -z "$(ls -A /usr/lib/postgresql 2> /dev/null)" ] || { echo "bare-machine: /usr/lib/postgresql is not empty" >&2; exit 1; }
echo "bare-machine: only loopback, no chromium/psql/pg_*/redis-* in /usr/bin, /usr/lib/postgresql empty, CI unset: $*"
status=0
"$@" || status=$?
# rmdir refuses a folder still showing the real /usr/bin, so nothing real is ever removed.
umount /usr/bin && umount "$farm/real" && rmdir "$farm/real" && rm -rf "$farm"
exit $status
' bare-machine "$@"
