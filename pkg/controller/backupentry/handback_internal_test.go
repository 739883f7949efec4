package backupentry

import (
	"context"
	"slices"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestHoldLetsGoOfEntriesWhoseBucketIsHandedBack: while the entry's BackupBucket hands the
// bucket back (providerConfig handBack), the entry is not held by this extension's finalizer
// (the provider extension taking the bucket back deletes entries without it), and one held
// before is let go; otherwise it is held.
func TestHoldLetsGoOfEntriesWhoseBucketIsHandedBack(t *testing.T) {
	cases := []struct {
		name       string
		bucket     *controllertest.Config // nil: no BackupBucket on this seed
		finalizers []string
		wantHeld   bool
	}{
		{name: "bucket not handed back: held", bucket: &controllertest.Config{}, wantHeld: true},
		{name: "bucket not on this seed: held", wantHeld: true},
		{name: "bucket handed back: not held", bucket: &controllertest.Config{HandBack: true}},
		{name: "bucket handed back, held before: let go", bucket: &controllertest.Config{HandBack: true}, finalizers: []string{FinalizerName}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k8s := controllertest.Client()
			if c.bucket != nil {
				bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"},
					Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(*c.bucket)}}}
				if err := k8s.Create(ctx, bb); err != nil {
					t.Fatal(err)
				}
			}
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1", Finalizers: c.finalizers},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket"}}
			if err := k8s.Create(ctx, be); err != nil {
				t.Fatal(err)
			}
			a := &holdingActuator{client: k8s, provider: provider.Register(controllertest.Provider{})}
			if err := a.hold(ctx, be); err != nil {
				t.Fatalf("hold: %v", err)
			}
			got := &extensionsv1alpha1.BackupEntry{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
				t.Fatal(err)
			}
			if held := slices.Contains(got.Finalizers, FinalizerName); held != c.wantHeld {
				t.Fatalf("finalizers %v; want held by %s: %t", got.Finalizers, FinalizerName, c.wantHeld)
			}
		})
	}
}
