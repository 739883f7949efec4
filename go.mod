module github.com/gardener-extension-backup/gardener-extension-backup

go 1.26.5
