# syntax=docker/dockerfile:1
#
# weir as one static binary on distroless, running as a non-root user.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd) -t weir .
#   docker run -d --name weir --hostname ca.example.internal \
#     -p 14000:14000 -p 14080:14080 -v weir-data:/data weir
#
# The data directory (CA keys, databases, admin token) is the volume /data.
# Back it up live with
#   docker exec weir /weir backup -config /etc/weir/weir.yaml -out /data/backup-1
#   docker cp weir:/data/backup-1 .
# The admin listener stays on the container's loopback: reach it with
# docker exec, or publish it with TLS and the token (docs/operations.md,
# "Containers").

ARG GO_VERSION=1.26

# The build runs on the builder's own platform and cross-compiles, which a
# static (CGO_ENABLED=0) Go binary allows.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" -o /out/weir ./cmd/weir
# An empty /data owned by the image's user, so that a new named volume is
# writable by it.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/weir /weir
COPY --from=build --chown=65532:65532 /out/data /data
# The image's configuration: only what differs from the defaults (run
# "docker run --rm weir init -print-config" for every key, commented).
# Mount your own file over it to change anything.
COPY <<'EOF' /etc/weir/weir.yaml
# weir in a container: every key not set here keeps its default.
data-dir: /data
server:
  # Every interface of the container; publish it with -p 14000:14000.
  listen: "0.0.0.0:14000"
  # The URL clients use: set it to the name they reach weir by. weir's own
  # HTTPS certificate covers localhost, 127.0.0.1, ::1 and the container's
  # host name (docker run --hostname), or set server.tls.
  external-url: "https://localhost:14000"
  # The CRLs and CA certificates over plain HTTP, at the URLs the
  # certificates name (the host of external-url, this port): publish it
  # with -p 14080:14080, or put port 80 of that name in front of it and set
  # external-url here to http://<name>.
  http: { listen: "0.0.0.0:14080" }
admin:
  # The container's loopback: docker exec and the HEALTHCHECK reach it. To
  # publish it, listen on 0.0.0.0:14001 with tls: true (and auth: token,
  # the default); weir refuses anything less off loopback.
  listen: "127.0.0.1:14001"
log:
  format: json
EOF
USER 65532:65532
VOLUME /data
EXPOSE 14000 14001 14080
# The image has no shell or curl: weir asks its own /readyz (the admin
# listener's, per the configuration).
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["/weir", "healthcheck", "-config", "/etc/weir/weir.yaml", "-timeout", "5s"]
ENTRYPOINT ["/weir"]
CMD ["serve", "-config", "/etc/weir/weir.yaml"]
