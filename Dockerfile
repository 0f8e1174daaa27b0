# SPDX-License-Identifier: Apache-2.0

# weir's container image: the static (CGO_ENABLED=0) binary of a release
# tarball FROM scratch, running as the non-root user 65532.
#
# Its build context is not the repository but a directory that
# deploy/image.sh prepares from the release tarballs (deploy/release.sh), one
# per architecture; it needs no BuildKit and pulls no base image:
#   bash deploy/release.sh dist
#   bash deploy/image.sh dist      # dist/weir_<VERSION>_linux_<arch>.oci.tar
#   podman load -i dist/weir_<VERSION>_linux_amd64.oci.tar
#     (Docker: skopeo copy oci-archive:dist/weir_<VERSION>_linux_amd64.oci.tar \
#      docker-daemon:ghcr.io/weir-pki/weir:<VERSION>)
#   podman run -d --name weir --hostname ca.example.internal \
#     -p 14000:14000 -p 14080:14080 -v weir-data:/data ghcr.io/weir-pki/weir:<VERSION>
# Pushing it to a registry, and one manifest for both architectures:
# docs/operations.md, "Containers".
#
# The context holds:
#   rootfs/weir                              the binary
#   rootfs/etc/weir/weir.yaml                deploy/image/weir.yaml
#   rootfs/etc/ssl/certs/ca-certificates.crt the build host's CA bundle
#   rootfs/etc/passwd, rootfs/etc/group      deploy/image/ (user nonroot, 65532)
#   rootfs/tmp                               mode 1777
#   data                                     empty, becomes /data (65532:65532)
# Owners come from COPY (root, or --chown), modes from the context.
#
# The data directory (CA keys, databases, admin token) is the volume /data.
# Back it up live with
#   podman exec weir /weir backup -config /etc/weir/weir.yaml -out /data/backup-1
#   podman cp weir:/data/backup-1 .
# The admin listener stays on the container's loopback: reach it with
# podman exec, or publish it with TLS and the token (docs/operations.md,
# "Containers").

FROM scratch
ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.title="weir" \
      org.opencontainers.image.description="weir, an ACME certificate authority for internal PKI" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/weir-pki/weir" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY rootfs/ /
# An empty /data owned by the image's user, so that a new named volume is
# writable by it.
COPY --chown=65532:65532 data /data
USER 65532:65532
VOLUME /data
EXPOSE 14000 14001 14080
# The image has no shell or curl: weir asks its own /readyz (the admin
# listener's, per the configuration). An OCI image's configuration has no
# health check: buildah drops this one (with a warning) from the OCI image
# that deploy/image.sh builds, and only a docker-format build keeps it; give
# it at run time instead (docs/operations.md, "Containers").
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["/weir", "healthcheck", "-config", "/etc/weir/weir.yaml", "-timeout", "5s"]
ENTRYPOINT ["/weir"]
CMD ["serve", "-config", "/etc/weir/weir.yaml"]
