#!/usr/bin/env bash
# TEST/DEV HELPER ONLY: stand-in base images for a machine that cannot pull node:24-bookworm-slim or distroless.
# Makes two local images from a minimal Debian root (mmdebstrap, with this machine's apt sources, so a site mirror
# works) plus this machine's Node 24 binary and npm:
#   localhost/standin-node24-build:bookworm    Debian minbase + node + npm on PATH      (BUILD_IMAGE)
#   localhost/standin-node24-runtime:bookworm  libc/libstdc++ + /nodejs/bin/node only,  (RUNTIME_IMAGE)
#                                              users root and nonroot (65532), a CA bundle, no shell
# The shipped Dockerfiles keep their real defaults; pass these with `npm run images -- --standin`.
# Needs root (or a working `mmdebstrap --mode=unshare`), mmdebstrap, and podman or buildah to import.
set -euo pipefail

NODE_BIN=${NODE_BIN:-$(command -v node)}
NPM_DIR=${NPM_DIR:-$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")}
SUITE=${SUITE:-bookworm}
BUILD_TAG=${STANDIN_BUILD_IMAGE:-localhost/standin-node24-build:bookworm}
RUNTIME_TAG=${STANDIN_RUNTIME_IMAGE:-localhost/standin-node24-runtime:bookworm}

case "$("$NODE_BIN" --version)" in v24.*) ;; *) echo "standin-bases: $NODE_BIN is not Node 24 (run it through npm, which puts the project's node first on PATH)" >&2; exit 1 ;; esac
[ -f "$NPM_DIR/bin/npm-cli.js" ] || { echo "standin-bases: no npm at $NPM_DIR" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "standin-bases: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 1; }
command -v podman >/dev/null || command -v buildah >/dev/null || { echo "standin-bases: neither podman nor buildah" >&2; exit 1; }

# This machine's apt sources (deb822 or one-line), so no mirror host is written here.
mirror=()
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$f" ]; then mirror=("$f"); break; fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

PATH_ENV=PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
import_dir() { # rootfs-dir tag
  tar -C "$1" -cf "$1.tar" .
  if command -v podman >/dev/null; then
    podman import --quiet --change "ENV $PATH_ENV" "$1.tar" "$2" >/dev/null
  else
    local c; c=$(buildah from scratch)
    buildah add --quiet "$c" "$1.tar" / >/dev/null && buildah config --env "$PATH_ENV" "$c" && buildah commit --quiet --rm "$c" "$2" >/dev/null
  fi
  rm -f "$1.tar"
}

echo "standin-bases: build base $BUILD_TAG" >&2
b=$work/build
mmdebstrap --quiet --variant=minbase --include=ca-certificates --skip=output/dev "$SUITE" "$b" "${mirror[@]}"
mkdir -p "$b/usr/local/bin" "$b/usr/local/lib/node_modules"
cp "$NODE_BIN" "$b/usr/local/bin/node"
cp -a "$NPM_DIR" "$b/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$b/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$b/usr/local/bin/npx"
rm -rf "$b"/var/lib/apt/lists/* "$b"/var/cache/apt/*
import_dir "$b" "$BUILD_TAG"

echo "standin-bases: runtime base $RUNTIME_TAG" >&2
# extract: unpack these packages and their dependencies, run no maintainer script: no shell, no dpkg, no apt.
r=$work/runtime
mmdebstrap --quiet --variant=extract --include=libc6,libgcc-s1,libstdc++6,ca-certificates,tzdata --skip=output/dev \
  "$SUITE" "$r" "${mirror[@]}"
mkdir -p "$r/nodejs/bin" "$r/etc/ssl/certs" "$r/home/nonroot" "$r/tmp"
cp "$NODE_BIN" "$r/nodejs/bin/node"
chmod 1777 "$r/tmp" && chown 65532:65532 "$r/home/nonroot"
cat "$r"/usr/share/ca-certificates/mozilla/*.crt > "$r/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$r/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$r/etc/group"
rm -rf "$r"/var/lib/apt "$r"/var/cache/apt "$r"/var/lib/dpkg "$r"/usr/share/doc "$r"/usr/share/man "$r"/etc/apt
import_dir "$r" "$RUNTIME_TAG"

echo "standin-bases: done ($BUILD_TAG, $RUNTIME_TAG)" >&2
