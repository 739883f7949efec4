# gardener-extension-backup: Gardener BackupBucket/BackupEntry extensions.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PROVIDERS = $(shell go run ./hack/providers)
BIN := bin
GO_TEST_FLAGS ?= -count=1
PROVIDER ?= aws

.PHONY: help
help: ## List every target.
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build and cache kube-apiserver, etcd, MinIO, fake-gcs-server, Azurite and etcd-backup-restore (minutes the first time, seconds after).
	@hack/tools.sh all >/dev/null

.PHONY: build
build: ## Build the provider binaries and the admission webhook into bin/.
	@mkdir -p $(BIN)
	@for p in $(PROVIDERS) admission; do echo "building $(BIN)/gardener-extension-backup-$$p"; go build -o $(BIN)/gardener-extension-backup-$$p ./cmd/gardener-extension-backup-$$p || exit 1; done

.PHONY: vet
vet: ## Run go vet and check formatting and the SPDX headers.
	@hack/license-headers.sh check
	@test -z "$$(gofmt -l ./cmd ./pkg ./test ./charts ./hack)" || { echo "gofmt needed:"; gofmt -l ./cmd ./pkg ./test ./charts ./hack; exit 1; }
	go vet ./...

.PHONY: check
check: vet ## Lint as every Gardener repository does: go vet, gofmt, the SPDX headers and golangci-lint (.golangci.yaml; hack/golangci.sh installs it once, cached).
	@lint="$$(hack/golangci.sh)"; echo "golangci-lint run ./... (minutes on 2 cores)"; "$$lint" run ./...

.PHONY: format
format: ## Format the tree: gofmt -s and the SPDX header on every source file.
	@gofmt -s -w ./cmd ./pkg ./test ./charts ./hack
	@hack/license-headers.sh add

.PHONY: unit
unit: ## Unit tests of the core (no external components).
	go test $(GO_TEST_FLAGS) -race ./pkg/objectstore/... ./pkg/apis/... ./pkg/controller/... ./pkg/inventory/... ./pkg/metrics/... ./pkg/drill/...
	go test $(GO_TEST_FLAGS) ./hack/layers/ ./hack/docscheck/ ./pkg/app/

.PHONY: test
test: tools check ## Everything (after make check: vet, gofmt, SPDX headers, golangci-lint): unit tests, conformance and integration on MinIO, fake-gcs-server, Azurite and Swift+Keystone.
	@hack/openstack.sh install
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)" FAKE_GCS_SERVER="$$(hack/tools.sh fakegcs)" AZURITE_BLOB="$$(hack/tools.sh azurite)" ETCDBR="$$(hack/tools.sh etcdbr)" ETCDBR_PREVIOUS="$$(hack/tools.sh etcdbr-previous)" INCUMBENT_AWS="$$(hack/incumbent.sh aws)" INCUMBENT_GCP="$$(hack/incumbent.sh gcp)" INCUMBENT_ADMISSION="$$(hack/incumbent.sh admission)"; \
	go test $(GO_TEST_FLAGS) -timeout 30m ./...
	go test $(GO_TEST_FLAGS) -race ./pkg/objectstore/... ./pkg/controller/... ./pkg/inventory/... ./pkg/metrics/... ./pkg/drill/...

.PHONY: demo
demo: ## Run the aws extension (PROVIDER=<any type of pkg/provider/all>: that one) against a local seed (envtest), its stand-in (test/standin/<type>) and the real etcd-backup-restore, and report. Builds only what that provider needs (test/demo/demo-<type>).
	@mkdir -p $(BIN)
	@# The tools and both binaries build at once: on a first run their builds overlap.
	@hack/tools.sh demo $(PROVIDER) >/dev/null & tools=$$!; \
	  hack/progress.sh "building $(BIN)/demo-$(PROVIDER) and $(BIN)/gardener-extension-backup-$(PROVIDER)" \
	    go build -o $(BIN)/ ./test/demo/demo-$(PROVIDER) ./cmd/gardener-extension-backup-$(PROVIDER); built=$$?; \
	  wait $$tools && test $$built = 0
	@$(BIN)/demo-$(PROVIDER) --binary $(BIN)/gardener-extension-backup-$(PROVIDER)

.PHONY: bench
bench: bench-aws bench-gcp bench-azure bench-openstack ## Every provider's entry-deletion benchmark (see docs/dev/performance.md).

.PHONY: bench-aws
bench-aws: tools ## 100,000 objects on MinIO: this engine vs baseline vs raw limit, at 0 and 50 ms.
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/aws $(BENCH_FLAGS)

.PHONY: bench-gcp
bench-gcp: tools ## 10,000 and 100,000 objects on fake-gcs-server: engine vs baseline vs raw limit, at 0 and 50 ms, with memory.
	@export FAKE_GCS_SERVER="$$(hack/tools.sh fakegcs)"; go run ./test/bench/gcp $(BENCH_FLAGS)

.PHONY: bench-azure
bench-azure: tools ## 10,000 blobs on Azurite: engine vs one Delete per blob (sampled) vs raw Blob Batch, at 0 and 50 ms.
	@export AZURITE_BLOB="$$(hack/tools.sh azurite)"; go run ./test/bench/azure $(BENCH_FLAGS)

.PHONY: bench-openstack
bench-openstack: ## 20,000 objects on real Swift: this engine vs one bulk request, at 0 and 50 ms.
	@go run ./test/bench/openstack $(BENCH_FLAGS)

.PHONY: bench-entries
bench-entries: tools ## Many small BackupEntries deleted at once on MinIO (100 x 1,000 objects): the engine as the delegate runs it vs the raw limit of the same shape, in one run.
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/entries $(BENCH_FLAGS)

.PHONY: bench-entrycredentials
bench-entrycredentials: tools ## Issuing and revoking per-entry credentials on MinIO and on the IAM stand-in enforced on MinIO (200 entries, 5 at a time; BENCH_FLAGS=--issuers=MinIO for one): time and requests per entry.
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/entrycredentials $(BENCH_FLAGS)

.PHONY: bench-observe
bench-observe: tools ## Steady-state cost of the bucket probe and the entry inventory: the aws binary on envtest + MinIO, time scaled, requests counted by a proxy, vs both off.
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/observe $(BENCH_FLAGS)

.PHONY: bench-scale
bench-scale: tools ## Many BackupEntries on one bucket (1,000 by default; BENCH_FLAGS=--entries=5000): the aws binary on envtest + MinIO, time to Succeeded, RSS, API and cloud calls per entry, a resync, a mass deletion.
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/scale $(BENCH_FLAGS)

.PHONY: bench-handback
bench-handback: tools ## The aws hand-back on 100,000 object versions on MinIO: the old full-bucket tag scan beside today's (none), in one run.
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/handback $(BENCH_FLAGS)

.PHONY: bench-rehearsal
bench-rehearsal: tools ## One rehearsal pass over 1,000 BackupEntries on envtest + MinIO (BENCH_FLAGS=--entries=200 for less): time, API server and store requests per entry; then the drill's cost per entry over 20 of them (--drills=0: none).
	@export KUBEBUILDER_ASSETS="$$(hack/tools.sh envtest)" GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/rehearsal $(BENCH_FLAGS)

.PHONY: bench-copy
bench-copy: tools ## Copying an entry between two MinIO servers and to Azurite (another store type) (a 512 MiB full snapshot; 500 deltas of 64 KiB; BENCH_FLAGS="--full-mib 1024 --deltas 1000" for more): raw read, raw write, streamed copy, a pass with nothing to do, server-side copy, MinIO's own bucket replication, in one run, with requests; within one MinIO the server-side copy by the copy's own user (granted read) vs the streamed copy vs the raw rates, with ratios; the streamed copy to Azurite beside Azurite's raw write; 4 x 64 MiB among 200 deltas with the default byte budget and the old bound, with peak heap; the crossover of server-side and streamed copies by snapshot size (--crossover, --crossover-rounds; --crossover-only for it and the cost alone); and the requests and bytes of a day per 1,000 entries (--cost-*). BENCH_FLAGS="--deltas 1000 --cross-repeat 3" repeats the copy to Azurite beside both raw rates, with CPU seconds per process.
	@export GEB_MINIO="$$(hack/tools.sh minio)" AZURITE_BLOB="$$(hack/tools.sh azurite)"; go run ./test/bench/copy $(BENCH_FLAGS)

.PHONY: bench-drill
bench-drill: tools ## Restore drill of a 1 GiB full snapshot and 10,000 deltas in MinIO (and a 128 MiB one): raw download vs drill in one run, peak RSS of the fetch and of the restore child (BENCH_FLAGS=--sizes=64,256 --deltas=1000 for less).
	@export GEB_MINIO="$$(hack/tools.sh minio)"; go run ./test/bench/drill $(BENCH_FLAGS)

# A release: its images are $(IMAGE_REGISTRY)/gardener-extension-backup-<binary>:$(IMAGE_TAG), its
# charts $(IMAGE_REGISTRY)/charts/<chart>:$(IMAGE_TAG) (version $(IMAGE_TAG), a semantic version) for
# gardener-extension-backup and the admission's gardener-extension-backup-admission-runtime and
# -application. Empty: values.yaml's image.registry and image.tag.
IMAGE_REGISTRY ?=
IMAGE_TAG ?=
PLATFORMS ?= linux/amd64,linux/arm64
RELEASE = go run ./hack/release
RELEASE_FLAGS = --registry "$(IMAGE_REGISTRY)" --tag "$(IMAGE_TAG)"

.PHONY: image
image: ## Build the image of PROVIDER (aws by default; or admission) for PLATFORMS as an OCI layout in bin/images/gardener-extension-backup-$(PROVIDER), without Docker (go build, go-containerregistry).
	@$(RELEASE) images $(RELEASE_FLAGS) --binaries "$(PROVIDER)" --platforms "$(PLATFORMS)" --out $(BIN)/images

.PHONY: images
images: ## Build the six images (five providers, admission) for PLATFORMS as OCI layouts in bin/images/, without Docker.
	@$(RELEASE) images $(RELEASE_FLAGS) --binaries "$(PROVIDERS) admission" --platforms "$(PLATFORMS)" --out $(BIN)/images

.PHONY: push-images
push-images: images ## Build and push the six images to IMAGE_REGISTRY with IMAGE_TAG (credentials: docker login / crane auth login, ~/.docker/config.json).
	@$(RELEASE) push-images $(RELEASE_FLAGS) --binaries "$(PROVIDERS) admission" --out $(BIN)/images

.PHONY: chart
chart: ## Package the three charts for the release (the seed's, the admission's runtime and application): bin/chart/<chart>-<tag>.tgz and the OCI artifacts (helm's media types) in bin/chart/oci/<chart>.
	@$(RELEASE) chart $(RELEASE_FLAGS) --out $(BIN)/chart

.PHONY: push-chart
push-chart: chart ## Package and push the three charts to IMAGE_REGISTRY/charts/<chart>:IMAGE_TAG.
	@$(RELEASE) push-chart $(RELEASE_FLAGS) --out $(BIN)/chart

# The checked-in examples are values.yaml's release; another release's go to bin/examples.
EXAMPLES_DIR ?= $(if $(IMAGE_REGISTRY)$(IMAGE_TAG),$(BIN)/examples,example)

.PHONY: examples
examples: ## Generate <provider>/controller-registration.yaml and extension.yaml, and admission/extension.yaml, for the release into EXAMPLES_DIR (example/ for values.yaml's release, bin/examples/ when IMAGE_REGISTRY or IMAGE_TAG is given).
	@go run ./hack/gen-examples --registry "$(IMAGE_REGISTRY)" --tag "$(IMAGE_TAG)" --out "$(EXAMPLES_DIR)"

.PHONY: duplicates
duplicates: ## Show repeated code (needs the duplicates tool).
	@duplicates --most 20

.PHONY: clean
clean: ## Remove build output (the tool cache outside the checkout stays).
	rm -rf $(BIN)
