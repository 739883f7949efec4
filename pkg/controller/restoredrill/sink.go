// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// Sink is where one drill of an entry leaves its traces: the drill itself (Driller) writes
// nowhere. Its contract, for one call of Driller.Drill:
//   - Start is called once the drill holds its slot, before anything is read; its error ends the
//     drill there (Drill returns it; neither Abandon nor Publish follows).
//   - Then exactly one of: Abandon, when ctx ended during the drill (the process stops: nothing
//     proven, nothing to publish); or Publish, with the drill's status and its verdict, last being
//     the drill before as the caller knows it (nil: none). Publish's error is Drill's.
//
// be is the entry as the caller read it; a Sink must not modify it.
type Sink interface {
	Start(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error
	Abandon(ctx context.Context, be *extensionsv1alpha1.BackupEntry)
	Publish(ctx context.Context, be *extensionsv1alpha1.BackupEntry, st *drill.Status, last *drill.Status, v Verdict) error
}

// Driller drills an entry once and hands the outcome to a Sink. It has no client: it reads the
// store with the entry's credentials (SourceFor) and the entry's Garden and shoot's Cluster
// (Reader), and what is written anywhere is the Sink's.
type Driller struct {
	// Reader reads the entry's Garden (entryinfo.LocateEntry) and its shoot's Cluster (a shoot
	// that takes no snapshots now excuses NoFullSnapshot).
	Reader client.Reader
	// Clock is the time source (nil: the real clock).
	Clock     clock.PassiveClock
	Options   Options
	SourceFor SourceFor
	Restore   Restorer
	// Slots bounds the drills at once in the process (capacity Options.Concurrency), shared by
	// every Driller of the process.
	Slots chan struct{}
}

// NewSlots are the slots of a process's drills: Options.Concurrency (at least one) at once.
func NewSlots(opts Options) chan struct{} { return make(chan struct{}, max(opts.Concurrency, 1)) }

// driller is the Driller of r's deps.
func (r *Reconciler) driller() Driller {
	return Driller{Reader: r.Reader, Clock: r.Clock, Options: r.Options, SourceFor: r.SourceFor, Restore: r.Restore, Slots: r.Slots}
}

func (d Driller) now() metav1.Time {
	if d.Clock == nil {
		return metav1.Now()
	}
	return metav1.NewTime(d.Clock.Now())
}

// Drill drills every etcd under be's prefix within a slot (sink.Start once it has it), excuses
// what the shoot's state explains, judges (verdictOf, last: the drill before, nil: none;
// chainsCheckedAt: when the inventory last checked the chains by names, nil: never) and hands
// status and verdict to sink.Publish. Its error is ctx's, Start's or Publish's: everything else
// is in the status.
func (d Driller) Drill(ctx context.Context, be *extensionsv1alpha1.BackupEntry, sink Sink, last *drill.Status, chainsCheckedAt *metav1.Time) (*drill.Status, Verdict, error) {
	return d.drillAt(ctx, be, d.primaryOf(be), sink, last, chainsCheckedAt)
}

// drillAt is Drill of the store at w (the entry's own bucket, or its copy).
func (d Driller) drillAt(ctx context.Context, be *extensionsv1alpha1.BackupEntry, w where, sink Sink, last *drill.Status, chainsCheckedAt *metav1.Time) (*drill.Status, Verdict, error) {
	st, err := d.drill(ctx, be, w, sink)
	if err != nil {
		// ctx ended (the process is stopping): nothing proven, nothing published.
		if ctx.Err() != nil && st != nil {
			sink.Abandon(ctx, be)
		}
		return nil, Verdict{}, err
	}
	if chainsCheckedAt != nil { // what the inventory found by names, the drill has seen too
		checked := *chainsCheckedAt
		st.ChainsCheckedAt = &checked
	}
	if err := excuse(ctx, d.Reader, be, st); err != nil {
		log.FromContext(ctx).Info("Could not read the shoot's Cluster", "error", err.Error())
	}
	v := verdictOf(st, last)
	if err := sink.Publish(ctx, be, st, last, v); err != nil {
		return nil, Verdict{}, err
	}
	return st, v, nil
}

// drill drills every etcd under the entry's prefix (entryinfo.LocateEntry: a garden's is not
// under its name) within a slot of the process's concurrency: drill.Drill, the restores by
// Restore. Once it has the slot, sink.Start before it reads anything. Its error is ctx's or
// Start's: everything else is in the status. A nil status with an error: nothing was started.
func (d Driller) drill(ctx context.Context, be *extensionsv1alpha1.BackupEntry, w where, sink Sink) (*drill.Status, error) {
	select {
	case d.Slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-d.Slots }()
	if err := sink.Start(ctx, be); err != nil {
		return nil, err
	}
	st := &drill.Status{Bucket: w.bucket, Region: w.region}
	defer func() { st.DrilledAt = d.now() }()
	loc, err := entryinfo.LocateEntry(ctx, d.Reader, be)
	if err != nil {
		st.Error = err.Error()
		return st, ctx.Err()
	}
	st.Prefix = loc.Prefix.String()
	src, err := w.source(ctx)
	if err != nil {
		st.Error = err.Error()
		return st, ctx.Err()
	}
	o := d.Options
	results, err := drill.Drill(ctx, src, w.bucket, st.Prefix, drill.Options{
		ScratchDir: o.ScratchDir, MaxBytes: o.MaxBytes, MaxScratchBytes: o.MaxScratchBytes,
		ReadRate: o.ReadRate, Restore: d.Restore,
		Deadline: o.Deadline, MaxDeltas: o.MaxDeltas, MaxKeys: o.MaxKeys,
	})
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	switch {
	case drill.ReasonOf(err) == drill.ReasonCutOff:
		st.CutOff = err.Error()
		return st, nil
	case err != nil:
		st.Error = err.Error()
		return st, nil
	}
	for _, res := range results {
		if drill.ReasonOf(res.Err) == drill.ReasonCutOff {
			st.CutOff = res.Err.Error()
		}
		if res.Unconfined != "" {
			log.FromContext(ctx).Info("The restore drill's child process ran without Landlock confinement", "etcd", res.Etcd, "reason", res.Unconfined)
		}
		st.Etcds = append(st.Etcds, etcdStatus(res))
		metrics.DrillDuration.WithLabelValues(resultLabel(res.Err), w.side.store).Observe(res.Duration.Seconds())
		metrics.DrillBytesTotal.WithLabelValues(w.side.store).Add(float64(res.BytesRead))
	}
	return st, nil
}

// entryStatus is the Sink of the drill controller: the entry's own status, the side's part of
// it. Start marks the drill started in providerStatus (markStarted), Abandon removes the mark,
// Publish sets the side's condition and drill status (which ends the mark), emits the event of a
// changed verdict and sets the side's drill metrics of the entry.
type entryStatus struct {
	r    *Reconciler
	side side
}

var _ Sink = entryStatus{}

func (s entryStatus) Start(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return s.r.markStarted(ctx, be, s.side)
}

func (s entryStatus) Abandon(ctx context.Context, be *extensionsv1alpha1.BackupEntry) {
	s.r.unmarkStarted(ctx, be, s.side)
}

func (s entryStatus) Publish(ctx context.Context, be *extensionsv1alpha1.BackupEntry, st *drill.Status, last *drill.Status, v Verdict) error {
	if err := s.r.publish(ctx, be, s.side, st, v); err != nil {
		return err
	}
	observe(be.Name, s.side.store, st, last)
	return nil
}
