#!/usr/bin/env bash
# Builds retryd's image from deploy/Dockerfile and prints its size and build time:
#
#   deploy/build-image.sh [tag]            # default retryd:latest
#
# - The base images (node:20-bookworm-slim, debian:bookworm-slim) are pulled when missing, or, where no registry
#   answers, built from a Debian mirror and this machine's Node.js 20 (deploy/base-image.sh). Present, they are reused.
# - Behind a TLS-intercepting proxy, npm in the build stage needs the proxy's CA: the bundle in RETRYD_BUILD_CA, else
#   npm's own `cafile`, is copied to deploy/build-ca.pem (ignored by git), which only the build stage reads.
# - HTTP_PROXY, HTTPS_PROXY and NO_PROXY (either case), when set, reach the build as Docker's predefined build
#   arguments, which the image does not keep.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-retryd:latest}

missing=()
for base in node:20-bookworm-slim debian:bookworm-slim; do
  docker image inspect "$base" >/dev/null 2>&1 || missing+=("$base")
done
for base in "${missing[@]}"; do
  if ! docker pull -q "$base" >/dev/null 2>&1; then
    echo "build-image: $base cannot be pulled; building the base images locally (deploy/base-image.sh)"
    deploy/base-image.sh
    break
  fi
done

ca=${RETRYD_BUILD_CA:-$(npm config get cafile 2>/dev/null || true)}
if [ -n "$ca" ] && [ "$ca" != null ] && [ "$ca" != undefined ]; then
  [ -r "$ca" ] || { echo "build-image: the CA bundle $ca is not readable" >&2; exit 1; }
  # Rewritten only when it changed: the same bundle keeps the cached dependency layer.
  cmp -s "$ca" deploy/build-ca.pem 2>/dev/null || cp "$ca" deploy/build-ca.pem
else
  rm -f deploy/build-ca.pem
fi

args=()
for name in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
  [ -n "${!name:-}" ] && args+=(--build-arg "$name")
done

start=$SECONDS
docker build -f deploy/Dockerfile -t "$tag" "${args[@]}" .
size=$(docker image inspect -f '{{.Size}}' "$tag")
echo "build-image: $tag, $((size / 1000000)) MB, built in $((SECONDS - start)) s"
