package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestDeleteOptionsLeaveTimeToReport(t *testing.T) {
	cases := []struct {
		timeout                  time.Duration
		wantDeadline, wantCutoff time.Duration // before the reconcile's end
	}{
		{3 * time.Minute, 36 * time.Second, 18 * time.Second}, // gardener's default
		{8 * time.Second, 4 * time.Second, 2 * time.Second},   // the integration tests'
		{4 * time.Second, 2 * time.Second, time.Second},       // margins never take more than half
	}
	for _, c := range cases {
		t.Run(c.timeout.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			end, _ := ctx.Deadline()
			opts := controller.DeletionOptions{Parallelism: 3}.DeleteOptions(ctx)
			// The margins are computed from the time left when called: allow for the call itself.
			near := func(got time.Time, want time.Duration) bool {
				d := end.Sub(got) - want
				return d > -100*time.Millisecond && d < 100*time.Millisecond
			}
			if opts.Parallelism != 3 || !near(opts.Deadline, c.wantDeadline) || !near(opts.Cutoff, c.wantCutoff) {
				t.Fatalf("deadline %v and cutoff %v before the end, parallelism %d; want %v, %v, 3",
					end.Sub(opts.Deadline), end.Sub(opts.Cutoff), opts.Parallelism, c.wantDeadline, c.wantCutoff)
			}
		})
	}
	opts := controller.DeletionOptions{}.DeleteOptions(context.Background())
	if opts.Deadline.IsZero() || !opts.Deadline.Before(opts.Cutoff) {
		t.Fatalf("without a deadline: deadline %v, cutoff %v; want both set, deadline first", opts.Deadline, opts.Cutoff)
	}
}

// TestAnInvalidConfigComesWithTheDefaults: callers that must go on with an invalid providerConfig
// (deletion, deferral, the scheduler) get the provider's defaults beside the error, never a nil
// config.
func TestAnInvalidConfigComesWithTheDefaults(t *testing.T) {
	p := provider.Register(controllertest.Provider{})
	bb := &extensionsv1alpha1.BackupBucket{Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: &runtime.RawExtension{Raw: []byte("{not json")}}}}
	cfg, err := controller.BucketConfig(p, bb)
	if !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("BucketConfig of an invalid config: %v; want ErrInvalidConfig", err)
	}
	if cfg.ProviderConfig == nil || cfg.GenerationSettings() != nil || cfg.HandsBack() {
		t.Fatalf("an invalid config came with %+v; want the defaults", cfg.ProviderConfig)
	}
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(controllertest.Config{HandBack: true})}}}
	if cfg, err := controller.EntryConfig(p, be); err != nil || !cfg.HandsBack() {
		t.Fatalf("EntryConfig = %+v, %v; want the entry's own providerConfig", cfg.ProviderConfig, err)
	}
}
