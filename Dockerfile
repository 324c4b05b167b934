# syntax=docker/dockerfile:1
#
# chunkstream container image: the static binaries `worker` (the default
# command), `producer` and `chunk` on an empty base, as a non-root user.
#
#   docker build -t chunkstream/chunkstream:dev .
#   docker run --rm -e NATS_URL=nats://nats:4222 chunkstream/chunkstream:dev
#   docker run --rm chunkstream/chunkstream:dev producer -h
#   docker run --rm chunkstream/chunkstream:dev chunk -h
#
# The build uses BuildKit cache mounts for the module and build caches and
# cross-compiles for the target platform (docker buildx --platform ...).

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0
# Dependencies first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" \
      -o /out/ ./cmd/worker ./cmd/producer ./cmd/chunk
# A passwd/group pair naming the runtime user, and a writable /tmp owned by
# it (the root file system is read-only in Kubernetes; /tmp is an emptyDir
# there and this directory elsewhere).
RUN mkdir -p /rootfs/etc /rootfs/tmp /rootfs/data \
 && echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > /rootfs/etc/passwd \
 && echo 'nonroot:x:65532:' > /rootfs/etc/group \
 && chown 65532:65532 /rootfs/tmp /rootfs/data \
 && chmod 1777 /rootfs/tmp

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="chunkstream" \
      org.opencontainers.image.description="Document chunking pipeline on NATS JetStream: worker, producer and chunk CLIs" \
      org.opencontainers.image.source="https://github.com/chunkstream/chunkstream" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /rootfs/ /
COPY --from=build /out/worker /out/producer /out/chunk /usr/local/bin/
ENV PATH=/usr/local/bin \
    CHUNKSTREAM_METRICS_ADDR=:9090
USER 65532:65532
WORKDIR /data
# Prometheus /metrics, /healthz and /readyz.
EXPOSE 9090
# No shell in the image: the worker probes its own /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/usr/local/bin/worker", "-healthcheck"]
# No ENTRYPOINT: the command names the program (worker by default), so
# `docker run IMAGE producer ...` and Kubernetes `command: [producer]` work.
CMD ["worker"]
