module github.com/gardener-extension-backup/gardener-extension-backup/test/incumbent/azure

go 1.26.2

require (
	github.com/gardener/gardener v1.144.2
	github.com/gardener/gardener-extension-provider-azure v1.62.1
	k8s.io/client-go v0.35.5
	sigs.k8s.io/controller-runtime v0.23.3
)
