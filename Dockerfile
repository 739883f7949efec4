# One image per provider binary: docker build --build-arg PROVIDER=aws -t gardener-extension-backup-aws .
# (make images builds all four; this machine has no Docker engine, so it is not built in CI.)
FROM golang:1.26.8 AS builder
ARG PROVIDER
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN test -n "$PROVIDER" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /gardener-extension-backup ./cmd/gardener-extension-backup-${PROVIDER}

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /gardener-extension-backup /gardener-extension-backup
USER 65532:65532
ENTRYPOINT ["/gardener-extension-backup"]
