#!/usr/bin/env bash
# Builds the two base images deploy/Dockerfile names, debian:bookworm-slim and node:20-bookworm-slim, on a machine that
# reaches no container registry but does reach a Debian mirror: Debian's minimal root file system (debootstrap
# --variant=minbase) and, for the Node.js one, this machine's Node.js 20 with its npm and headers under /usr/local, where
# the official image keeps them. A tag that is already present is kept, so a second run costs nothing; --force
# rebuilds both. Needs root, debootstrap and a running Docker daemon.
#
#   deploy/base-image.sh                         # mirror from /etc/apt/sources.list*, else deb.debian.org
#   DEBIAN_MIRROR=http://mirror.example/debian deploy/base-image.sh
set -euo pipefail

DEBIAN_TAG=debian:bookworm-slim
NODE_TAG=node:20-bookworm-slim

if [ "${1:-}" != --force ] && docker image inspect "$DEBIAN_TAG" >/dev/null 2>&1 && docker image inspect "$NODE_TAG" >/dev/null 2>&1; then
  echo "base-image: $DEBIAN_TAG and $NODE_TAG are present"
  exit 0
fi

node_bin=$(readlink -f "$(command -v node)")
node_version=$(node -p process.version)
case "$node_version" in
  v20.*) ;;
  *) echo "base-image: $NODE_TAG needs Node.js 20 on this machine, found $node_version" >&2; exit 1 ;;
esac
# The prefix Node.js was installed under: its npm and headers are beside it (lib/node_modules/npm, include/node).
node_prefix=$(dirname "$(dirname "$node_bin")")
for needed in "$node_prefix/lib/node_modules/npm/bin/npm-cli.js" "$node_prefix/include/node/node_api.h"; do
  [ -e "$needed" ] || { echo "base-image: $needed is missing (Node.js under $node_prefix has no npm or no headers)" >&2; exit 1; }
done

# The first Debian mirror apt uses here (deb822 URIs: or a one-line deb entry), so the images install from it too.
mirror=${DEBIAN_MIRROR:-$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}'; } | grep -v security | head -n 1 || true
)}
mirror=${mirror:-http://deb.debian.org/debian}

rootfs=$(mktemp -d /tmp/retryd-base.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

echo "base-image: debootstrap bookworm from $mirror"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || { tail -n 30 "$rootfs.log" >&2; exit 1; }
rm -f "$rootfs.log"
# As Debian's own slim images: no downloaded packages, no package lists (an image runs apt-get update first).
find "$rootfs/var/cache/apt/archives" "$rootfs/var/lib/apt/lists" "$rootfs/var/log" -type f -delete
rm -rf "$rootfs"/dev/*
# And as their -slim variant: no manuals, documentation (but the copyrights) or translations, now or after apt-get.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
SLIM
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/lintian/*

import_rootfs() { # tag, changes…
  local tag=$1
  shift
  tar --numeric-owner -C "$rootfs" -c . | docker import "$@" - "$tag" >/dev/null
  echo "base-image: $tag $(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')"
}
import_rootfs "$DEBIAN_TAG" --change 'CMD ["bash"]'

mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules" "$rootfs/usr/local/include"
cp "$node_bin" "$rootfs/usr/local/bin/node"
cp -a "$node_prefix/lib/node_modules/npm" "$rootfs/usr/local/lib/node_modules/npm"
cp -a "$node_prefix/include/node" "$rootfs/usr/local/include/node"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
import_rootfs "$NODE_TAG" --change "ENV NODE_VERSION=${node_version#v}" --change 'CMD ["node"]'
