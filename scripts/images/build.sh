#!/usr/bin/env bash
# `npm run images [-- --standin] [-- --check]`: build both images with the first engine that works here
# (docker, podman, buildah), print each build's time and size, then optionally run the image check.
# Settings (environment, each with its default):
#   ENGINE=auto                 docker | podman | buildah
#   IMAGE_TAG=0.1.0             tag of both images (names as in manifests/base: cfs-batcher, cfs-batcher-health-sidecar)
#   BUILD_IMAGE, RUNTIME_IMAGE  base images (unset: the Dockerfiles' defaults; --standin: the local stand-ins)
#   EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS  CA bundle npm trusts in the build stages (a TLS-inspecting proxy, a mirror)
#   NPM_REGISTRY=               npm registry mirror for the build stages (empty: npm's default)
#   BUILD_ISOLATION=chroot      podman/buildah isolation (chroot works without a full OCI runtime setup)
#   BUILD_ULIMITS=              extra --ulimit flags for RUN steps (podman/buildah), e.g. where setrlimit is refused
set -euo pipefail
cd "$(dirname "$0")/../.."

standin=0 check=0
for a in "$@"; do
  case "$a" in
    --standin) standin=1 ;;
    --check) check=1 ;;
    *) echo "images: unknown argument $a (use --standin, --check)" >&2; exit 2 ;;
  esac
done

TAG=${IMAGE_TAG:-0.1.0}
CA=${EXTRA_CA_CERTS-${NODE_EXTRA_CA_CERTS:-}}

engine=${ENGINE:-auto}
if [ "$engine" = auto ]; then
  # The first engine that answers: a docker client without a daemon does not count.
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then engine=docker
  elif command -v podman >/dev/null && podman info >/dev/null 2>&1; then engine=podman
  elif command -v buildah >/dev/null && buildah info >/dev/null 2>&1; then engine=buildah
  else echo "images: no working docker, podman or buildah" >&2; exit 1; fi
fi

if [ "$standin" = 1 ]; then
  BUILD_IMAGE=${BUILD_IMAGE:-${STANDIN_BUILD_IMAGE:-localhost/standin-node20-build:bookworm}}
  RUNTIME_IMAGE=${RUNTIME_IMAGE:-${STANDIN_RUNTIME_IMAGE:-localhost/standin-node20-runtime:bookworm}}
  if ! "$engine" image inspect "$BUILD_IMAGE" >/dev/null 2>&1 || ! "$engine" image inspect "$RUNTIME_IMAGE" >/dev/null 2>&1; then
    STANDIN_BUILD_IMAGE=$BUILD_IMAGE STANDIN_RUNTIME_IMAGE=$RUNTIME_IMAGE scripts/images/standin-bases.sh
  fi
fi

args=()
[ -n "${BUILD_IMAGE:-}" ] && args+=(--build-arg "BUILD_IMAGE=$BUILD_IMAGE")
[ -n "${RUNTIME_IMAGE:-}" ] && args+=(--build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE")
[ -n "${NPM_REGISTRY:-}" ] && args+=(--build-arg "NPM_REGISTRY=$NPM_REGISTRY")
if [ -n "$CA" ]; then
  [ -r "$CA" ] || { echo "images: EXTRA_CA_CERTS=$CA is not readable" >&2; exit 1; }
  args+=(--secret "id=extra-ca,src=$CA")
fi
case "$engine" in
  docker) build=(docker build) ;;  # BuildKit (docker >= 23) reads RUN --mount=type=secret|cache
  podman) build=(podman build --layers --isolation "${BUILD_ISOLATION:-chroot}") ;;
  buildah) build=(buildah bud --layers --isolation "${BUILD_ISOLATION:-chroot}") ;;
  *) echo "images: unknown ENGINE=$engine" >&2; exit 2 ;;
esac
# shellcheck disable=SC2206 # BUILD_ULIMITS is a list of flags
[ "$engine" != docker ] && [ -n "${BUILD_ULIMITS:-}" ] && build+=(${BUILD_ULIMITS})

size_mb() {
  local bytes
  if [ "$engine" = buildah ]; then bytes=$(buildah inspect --type image --format '{{.ImageSize}}' "$1" 2>/dev/null || echo 0)
  else bytes=$("$engine" image inspect --format '{{.Size}}' "$1"); fi
  echo $(( (bytes + 500000) / 1000000 ))
}

echo "images: engine $engine${BUILD_IMAGE:+, build base $BUILD_IMAGE}${RUNTIME_IMAGE:+, runtime base $RUNTIME_IMAGE}${CA:+, extra CA for npm}" >&2
for spec in "Dockerfile.batcher cfs-batcher" "Dockerfile.sidecar cfs-batcher-health-sidecar"; do
  read -r file name <<<"$spec"
  start=$(date +%s%N)
  "${build[@]}" "${args[@]}" -f "$file" -t "localhost/$name:$TAG" . >&2
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf 'images: %s localhost/%s:%s built in %d.%01d s, %s MB\n' "$file" "$name" "$TAG" $((ms / 1000)) $((ms % 1000 / 100)) "$(size_mb "localhost/$name:$TAG")"
done

if [ "$check" = 1 ]; then
  [ "$engine" = buildah ] && { echo "images: the check runs containers: it needs docker or podman" >&2; exit 1; }
  npm run --silent build
  exec node scripts/dist/images-check.js --engine "$engine" --batcher "localhost/cfs-batcher:$TAG" --sidecar "localhost/cfs-batcher-health-sidecar:$TAG"
fi
