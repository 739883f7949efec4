// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	extensionsv1alpha1helper "github.com/gardener/gardener/pkg/api/extensions/v1alpha1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// DefaultInterval is how often the seed is rehearsed.
const DefaultInterval = 10 * time.Minute

// ConfigMapKey is the key of the ConfigMap that holds the last rehearsal (JSON of Published).
const ConfigMapKey = "rehearsal.json"

// maxConfigMapBytes keeps the report under the API server's 1 MiB object limit, with room for
// the rest of the ConfigMap.
const maxConfigMapBytes = 900 << 10

// Options configure the rehearsal.
type Options struct {
	// Interval between two rehearsals of the seed.
	Interval time.Duration
	// Namespace and Name of the ConfigMap the report is written to: the extension's own
	// namespace.
	Namespace, Name string
	// Classes are the extension classes of the objects rehearsed (empty: shoot).
	Classes []extensionsv1alpha1.ExtensionClass
	// Inventory are the inventory's options (its thresholds judge BackupsFresh).
	Inventory entryinventory.Options
	// Drills, when set, drills every live BackupEntry once per pass (the check BackupsRestorable),
	// within its options' caps and slots (nil: no drills).
	Drills *restoredrill.Driller
}

// Published is what the ConfigMap holds.
type Published struct {
	RehearsedAt metav1.Time `json:"rehearsedAt"`
	// Summary is the condition Rehearsal's message.
	Summary string   `json:"summary"`
	Reports []Report `json:"reports"`
	// Omitted counts adoptable BackupEntries whose reports did not fit (the metrics have them).
	Omitted int `json:"omitted,omitempty"`
}

// Rehearser rehearses the seed every Options.Interval as a manager.Runnable (on the leader
// only). It holds no state between rehearsals: each lists, reads and publishes anew.
type Rehearser struct {
	Provider provider.Provider
	// Reader reads from the API server: the objects rehearsed and the secrets.
	Reader client.Reader
	// Client writes the ConfigMap and the Extension's status: the only writes.
	Client  client.Client
	Options Options
	Log     logr.Logger
	// Garden is where the condition is copied in the garden (nil: nowhere, it stays on the seed).
	Garden *Garden
}

var _ manager.LeaderElectionRunnable = (*Rehearser)(nil)

// NeedLeaderElection is true: one replica rehearses.
func (r *Rehearser) NeedLeaderElection() bool { return true }

// awaitedRetry is how soon a pass follows one made while the seed configuration was awaited
// (its objects then CannotTell): the seed's Extension is usually applied within seconds.
const awaitedRetry = 10 * time.Second

// Start rehearses at once and then every interval until ctx ends; while the seed configuration
// is awaited (provider.Seeded), every awaitedRetry.
func (r *Rehearser) Start(ctx context.Context) error {
	for {
		if err := r.Once(ctx); err != nil {
			r.Log.Error(err, "Rehearsal")
		}
		next := r.Options.Interval
		if s, ok := r.Provider.(interface{ InForce() ([]byte, error) }); ok {
			if _, err := s.InForce(); err != nil {
				next = min(next, awaitedRetry)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// Once rehearses every BackupBucket and BackupEntry of the provider's type once and publishes
// the reports. When the objects cannot be listed, the condition says so and the metrics are
// emptied: a report of the objects it did not see would pass for the seed's.
func (r *Rehearser) Once(ctx context.Context) error {
	now := time.Now()
	reports, err := r.Rehearse(ctx, now)
	if err != nil {
		metrics.RecordRehearsal(nil, float64(now.Unix()))
		msg := fmt.Sprintf("Nothing was rehearsed: %v.", err)
		return errors.Join(err, r.setCondition(ctx, gardencorev1beta1.ConditionUnknown, ReasonFailed, msg, now))
	}
	status, reason, msg := Summary(reports)
	metrics.RecordRehearsal(gauges(reports), float64(now.Unix()))
	r.Log.Info("Rehearsed the seed", "objects", len(reports), "duration", time.Since(now).Round(time.Millisecond).String(), "status", status, "summary", msg)
	err = r.writeConfigMap(ctx, Published{RehearsedAt: metav1.NewTime(now), Summary: msg, Reports: reports})
	if err != nil {
		msg += fmt.Sprintf(" The details could not be written to ConfigMap %s/%s: %v.", r.Options.Namespace, r.Options.Name, err)
	} else {
		msg += fmt.Sprintf(" Details: ConfigMap %s/%s.", r.Options.Namespace, r.Options.Name)
	}
	return errors.Join(err, r.setCondition(ctx, status, reason, msg, now))
}

// Rehearse reads and rehearses every BackupBucket of the provider's type and classes, then
// every BackupEntry, each with its bucket's verdict.
func (r *Rehearser) Rehearse(ctx context.Context, now time.Time) ([]Report, error) {
	buckets := &extensionsv1alpha1.BackupBucketList{}
	if err := r.Reader.List(ctx, buckets); err != nil {
		return nil, fmt.Errorf("listing the BackupBuckets: %w", err)
	}
	entries := &extensionsv1alpha1.BackupEntryList{}
	if err := r.Reader.List(ctx, entries); err != nil {
		return nil, fmt.Errorf("listing the BackupEntries: %w", err)
	}
	var reports []Report
	byBucket := map[string]*Report{}
	for i := range buckets.Items {
		bb := &buckets.Items[i]
		if !r.ours(bb.Spec.DefaultSpec) {
			continue
		}
		rep := deleting(KindBackupBucket, bb.ObjectMeta)
		if rep == nil {
			b := Bucket(ctx, r.Provider, r.Reader, bb)
			rep = &b
		}
		reports = append(reports, *rep)
		byBucket[bb.Name] = rep
	}
	drilling := r.startDrills(ctx)
	defer drilling.end(ctx)
	for i := range entries.Items {
		be := &entries.Items[i]
		if !r.ours(be.Spec.DefaultSpec) {
			continue
		}
		rep := deleting(KindBackupEntry, be.ObjectMeta)
		if rep == nil {
			e := Entry(ctx, r.Provider, r.Reader, r.Options.Inventory, be, byBucket[be.Spec.BucketName], now)
			if c, ok := drilling.entry(ctx, be); ok {
				e.Checks = append(e.Checks, c)
			}
			rep = &e
		}
		reports = append(reports, *rep)
	}
	return reports, nil
}

// ours: the object is of the provider's type and of a class rehearsed.
func (r *Rehearser) ours(spec extensionsv1alpha1.DefaultSpec) bool {
	classes := r.Options.Classes
	if len(classes) == 0 {
		classes = []extensionsv1alpha1.ExtensionClass{extensionsv1alpha1.ExtensionClassShoot}
	}
	return spec.Type == r.Provider.Type() && slices.Contains(classes, extensionsv1alpha1helper.GetExtensionClassOrDefault(spec.Class))
}

// deleting is the report of an object being deleted (nil: it is not): its deletion is the
// incumbent's, and a takeover of a deletion is not rehearsed.
func deleting(kind string, meta metav1.ObjectMeta) *Report {
	if meta.DeletionTimestamp == nil {
		return nil
	}
	return &Report{Kind: kind, Name: meta.Name, Verdict: CannotTell, Reason: "cannot tell: it is being deleted (a deletion is not rehearsed)"}
}

func gauges(reports []Report) []metrics.RehearsedObject {
	out := make([]metrics.RehearsedObject, 0, len(reports))
	for _, r := range reports {
		o := metrics.RehearsedObject{Kind: r.Kind, Name: r.Name, Changes: r.CountChanges(), Restorable: restorable(r)}
		if r.Verdict != CannotTell {
			adoptable := r.Verdict == Adoptable
			o.Adoptable = &adoptable
		}
		out = append(out, o)
	}
	return out
}

// writeConfigMap writes p to the ConfigMap, leaving out the reports of adoptable BackupEntries
// (last first) where the whole would not fit.
func (r *Rehearser) writeConfigMap(ctx context.Context, p Published) error {
	data, err := fitted(p)
	if err != nil {
		return err
	}
	// Read from the API server: the RBAC of a rehearsal allows ConfigMaps in its namespace only,
	// which a cache's cluster-wide watch would not get.
	cm := &corev1.ConfigMap{}
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.Options.Namespace, Name: r.Options.Name},
			Data: map[string]string{ConfigMapKey: string(data)}}
		return r.Client.Create(ctx, cm)
	case err != nil:
		return err
	}
	cm.Data = map[string]string{ConfigMapKey: string(data)}
	return r.Client.Update(ctx, cm)
}

// fitted is p as JSON, with as many reports of adoptable BackupEntries left out as needed to
// stay under maxConfigMapBytes (counted in Omitted).
func fitted(p Published) ([]byte, error) {
	for {
		data, err := json.MarshalIndent(p, "", "  ")
		if err != nil || len(data) <= maxConfigMapBytes {
			return data, err
		}
		i := slices.IndexFunc(p.Reports, func(r Report) bool { return r.Kind == KindBackupEntry && r.Verdict == Adoptable })
		if i < 0 {
			return nil, fmt.Errorf("the report is %d bytes, more than a ConfigMap holds, without any adoptable entry's", len(data))
		}
		p.Reports = slices.Delete(slices.Clone(p.Reports), i, i+1)
		p.Omitted++
	}
}

// setCondition sets the condition Rehearsal on the seed's Extension backup-<provider> when the
// seed has it (the Seed declares it in spec.extensions); without it there is nowhere to put it.
// First it is copied to the garden (copyToGarden).
func (r *Rehearser) setCondition(ctx context.Context, status gardencorev1beta1.ConditionStatus, reason, msg string, now time.Time) error {
	msg = extstatus.EventNote(msg)
	msg = r.copyToGarden(ctx, status, reason, msg, now)
	ex := &extensionsv1alpha1.Extension{}
	key := client.ObjectKey{Namespace: v1beta1constants.GardenNamespace, Name: decode.ExtensionType(r.Provider.Type())}
	if err := r.Reader.Get(ctx, key, ex); err != nil {
		if apierrors.IsNotFound(err) {
			r.Log.Info("The seed has no Extension to put the rehearsal's condition on (the Seed does not declare it in spec.extensions)", "extension", key.String(), "summary", msg)
			return nil
		}
		return fmt.Errorf("reading the seed's Extension %s: %w", key, err)
	}
	err := extstatus.Patch(ctx, r.Client, r.Reader, ex, func(ex *extensionsv1alpha1.Extension) bool {
		ex.Status.Conditions, _ = extstatus.SetCondition(ex.Status.Conditions, ConditionRehearsal, status, reason, msg, now)
		return true
	})
	if err != nil {
		return fmt.Errorf("setting the condition %s of the seed's Extension %s: %w", ConditionRehearsal, key, err)
	}
	return nil
}
