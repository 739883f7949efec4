package all_test

import (
	"reflect"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// TestEveryListedTypeHasItsProvider: the list and the provider packages cannot drift apart; a
// provider serves the very API the list (and so the webhook) validates with.
func TestEveryListedTypeHasItsProvider(t *testing.T) {
	providers := map[string]any{}
	for _, p := range []any{&aws.Provider{}, &azure.Provider{}, &gcp.Provider{}, &local.Provider{}, &openstack.Provider{}} {
		providers[p.(interface{ Type() string }).Type()] = p
	}
	registered := map[string]provider.Provider{}
	for _, p := range []provider.Provider{provider.Register(&aws.Provider{}), provider.Register(&azure.Provider{}), provider.Register(&gcp.Provider{}), provider.Register(&local.Provider{}), provider.Register(&openstack.Provider{})} {
		registered[p.Type()] = p
	}
	apis := all.APIs()
	if len(apis) != len(providers) {
		t.Fatalf("%d APIs listed, %d provider packages", len(apis), len(providers))
	}
	for typ, api := range apis {
		p, ok := providers[typ]
		if !ok {
			t.Errorf("type %q is listed but has no provider", typ)
			continue
		}
		embedded := reflect.ValueOf(p).Elem().FieldByName(reflect.TypeOf(api).Name())
		if !embedded.IsValid() || embedded.Type() != reflect.TypeOf(api) {
			t.Errorf("provider %q does not serve the listed API %T", typ, api)
		}
		if _, err := registered[typ].Decode(nil); err != nil {
			t.Errorf("provider %q: decoding the defaults: %v", typ, err)
		}
	}
}
