# gardener-extension-backup: Gardener BackupBucket/BackupEntry extensions.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PROVIDERS := aws gcp openstack
BIN := bin
GO_TEST_FLAGS ?= -count=1

.PHONY: help
help: ## List every target.
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build and cache kube-apiserver, etcd and MinIO (minutes the first time, seconds after).
	@hack/tools.sh all >/dev/null

.PHONY: build
build: ## Build the provider binaries into bin/.
	@mkdir -p $(BIN)
	@for p in $(PROVIDERS); do echo "building $(BIN)/gardener-extension-backup-$$p"; go build -o $(BIN)/gardener-extension-backup-$$p ./cmd/gardener-extension-backup-$$p || exit 1; done

.PHONY: vet
vet: ## Run go vet and check formatting.
	@test -z "$$(gofmt -l ./cmd ./pkg ./test)" || { echo "gofmt needed:"; gofmt -l ./cmd ./pkg ./test; exit 1; }
	go vet ./...

.PHONY: unit
unit: ## Unit tests of the core (no external components).
	go test $(GO_TEST_FLAGS) -race ./pkg/objectstore/... ./pkg/apis/... ./pkg/controller/...

.PHONY: test
test: tools vet ## Everything: unit tests, conformance and integration on MinIO and on Swift+Keystone.
	@hack/openstack.sh install
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)"; \
	go test $(GO_TEST_FLAGS) -timeout 30m ./...
	go test $(GO_TEST_FLAGS) -race ./pkg/objectstore/... ./pkg/controller/...

.PHONY: demo
demo: tools build ## Run the aws extension against a local seed (envtest) and MinIO, and report.
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)"; \
	go run ./test/demo --binary $(BIN)/gardener-extension-backup-aws

.PHONY: bench
bench: bench-aws bench-openstack ## Every provider's entry-deletion benchmark (see docs/performance.md).

.PHONY: bench-aws
bench-aws: tools ## 100,000 objects on MinIO: this engine vs baseline vs raw limit, at 0 and 50 ms.
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/aws $(BENCH_FLAGS)

.PHONY: bench-openstack
bench-openstack: ## 20,000 objects on real Swift: this engine vs one bulk request, at 0 and 50 ms.
	@go run ./test/bench/openstack $(BENCH_FLAGS)

.PHONY: duplicates
duplicates: ## Show repeated code (needs the duplicates tool).
	@duplicates --most 20

.PHONY: clean
clean: ## Remove build output (the tool cache outside the checkout stays).
	rm -rf $(BIN)
