package azure

// ValidateBucketName implements provider.Provider with the store's naming rules (names.go).
func (p *Provider) ValidateBucketName(name string) error { return validateContainerName(name) }
