// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// CheckBackupsRestorable is the restore drill's check (Options.Drills): BackupsRestorable as the
// drill controller would set it.
const CheckBackupsRestorable = string(restoredrill.ConditionBackupsRestorable)

// drillMarkKey is the key of the rehearsal's drill mark in its ConfigMap <Options.Name>-drill: the
// entry whose drill runs and since when (JSON of drillMark), empty when none runs.
const drillMarkKey = "drilling"

// drillMark is the entry a rehearsal's drill started on and when: the rehearsal's own counterpart
// of the drill controller's drillStarted, in its own ConfigMap. A mark found at a pass's start is
// a drill that ended with the rehearsal's process (its container killed at its memory limit, most
// likely): that entry is reported DrillInterrupted and not drilled in this pass, so that one
// entry cannot stop every pass.
type drillMark struct {
	Entry   string      `json:"entry"`
	Started metav1.Time `json:"started"`
}

// drills are one pass's drills: Options.Drills, the mark found at its start (Entry "": none).
type drills struct {
	r           *Rehearser
	interrupted drillMark
}

// startDrills are the drills of a pass (nil when Options.Drills is nil), with the mark an earlier
// pass left.
func (r *Rehearser) startDrills(ctx context.Context) *drills {
	if r.Options.Drills == nil {
		return nil
	}
	d := &drills{r: r}
	cm := &corev1.ConfigMap{}
	if err := r.Reader.Get(ctx, d.key(), cm); err == nil && cm.Data[drillMarkKey] != "" {
		if err := json.Unmarshal([]byte(cm.Data[drillMarkKey]), &d.interrupted); err != nil {
			r.Log.Info("The rehearsal's drill mark does not decode; ignored", "configMap", d.key().String(), "error", err.Error())
		}
	}
	return d
}

func (d *drills) key() client.ObjectKey {
	return client.ObjectKey{Namespace: d.r.Options.Namespace, Name: d.r.Options.Name + "-drill"}
}

// entry drills be once into a report, writing nothing of the entry (reportSink), and is its check;
// ok is false where the entry is not drilled: a migration's source entry, whose prefix is its
// restored entry's (that entry's drill covers it). The entry of an interrupted drill is reported
// so, undrilled.
func (d *drills) entry(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (Check, bool) {
	if d == nil || entryinfo.IsSourceEntry(be) {
		return Check{}, false
	}
	if d.interrupted.Entry == be.Name {
		return Check{Name: CheckBackupsRestorable, Status: gardencorev1beta1.ConditionUnknown, Reason: restoredrill.ReasonDrillInterrupted,
			Message: fmt.Sprintf("The rehearsal's restore drill that started at %s ended with the rehearsal's process before it reported (killed: out of memory, most likely); not drilled in this pass.",
				d.interrupted.Started.UTC().Format(time.RFC3339))}, true
	}
	sink := reportSink{mark: d.mark}
	_, v, err := d.r.Options.Drills.Drill(ctx, be, &sink, nil, nil)
	// The mark names the drill running now: left while the pass goes on to the next entries, a
	// process killed there would be taken for a kill by this entry's drill.
	d.end(ctx)
	if err != nil { // the mark could not be written, or ctx ended: nothing was proven
		return Check{Name: CheckBackupsRestorable, Status: gardencorev1beta1.ConditionUnknown, Reason: restoredrill.ReasonDrillFailed,
			Message: fmt.Sprintf("The restore drill proved nothing: %v.", err)}, true
	}
	return Check{Name: CheckBackupsRestorable, Status: v.Status, Reason: v.Reason, Message: v.Message}, true
}

// end removes the mark after each drill and at the pass's end, also when ctx ended (the process
// stops in order: the drill it ended was not killed), within endTimeout.
func (d *drills) end(ctx context.Context) {
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
	defer cancel()
	if err := d.write(ctx, ""); err != nil {
		d.r.Log.Info("Could not remove the rehearsal's drill mark; the next pass reports that entry's drill interrupted", "error", err.Error())
	}
}

// endTimeout bounds end, within the manager's graceful shutdown (30 s).
const endTimeout = 10 * time.Second

// mark records that be's drill starts now.
func (d *drills) mark(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	data, err := json.Marshal(drillMark{Entry: be.Name, Started: metav1.Now()})
	if err != nil {
		return err
	}
	if err := d.write(ctx, string(data)); err != nil {
		return fmt.Errorf("marking the rehearsal's drill of %s started in ConfigMap %s: %w", be.Name, d.key(), err)
	}
	return nil
}

// write sets the mark ("": none) in the rehearsal's own ConfigMap, read from the API server (as
// writeConfigMap reads its report's).
func (d *drills) write(ctx context.Context, mark string) error {
	cm := &corev1.ConfigMap{}
	err := d.r.Reader.Get(ctx, d.key(), cm)
	switch {
	case apierrors.IsNotFound(err) && mark == "":
		return nil
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: d.key().Namespace, Name: d.key().Name}, Data: map[string]string{drillMarkKey: mark}}
		return d.r.Client.Create(ctx, cm)
	case err != nil:
		return err
	}
	if cm.Data[drillMarkKey] == mark {
		return nil
	}
	cm.Data = map[string]string{drillMarkKey: mark}
	return d.r.Client.Update(ctx, cm)
}

// reportSink is the rehearsal's restoredrill.Sink: nothing of the entry is written. Start marks
// the drill in the rehearsal's own ConfigMap (mark), which the caller removes when the drill
// returns (drills.end); Publish keeps the verdict for the caller.
type reportSink struct {
	mark      func(context.Context, *extensionsv1alpha1.BackupEntry) error
	published *restoredrill.Verdict
}

var _ restoredrill.Sink = (*reportSink)(nil)

func (s *reportSink) Start(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return s.mark(ctx, be)
}

func (*reportSink) Abandon(context.Context, *extensionsv1alpha1.BackupEntry) {}

func (s *reportSink) Publish(_ context.Context, _ *extensionsv1alpha1.BackupEntry, _ *drill.Status, _ *drill.Status, v restoredrill.Verdict) error {
	s.published = &v
	return nil
}

// restorable is r's BackupsRestorable as a gauge: true or false where it was drilled and found
// True or False, nil where it was not drilled or nothing was proven (Unknown).
func restorable(r Report) *bool {
	for _, c := range r.Checks {
		if c.Name != CheckBackupsRestorable || c.Status == gardencorev1beta1.ConditionUnknown {
			continue
		}
		ok := c.Status == gardencorev1beta1.ConditionTrue
		return &ok
	}
	return nil
}

// drillSummary counts the entries drilled by their BackupsRestorable, for the summary ("" when
// none was drilled).
func drillSummary(reports []Report) string {
	counts := map[gardencorev1beta1.ConditionStatus]int{}
	drilled := 0
	for _, r := range reports {
		for _, c := range r.Checks {
			if c.Name == CheckBackupsRestorable {
				counts[c.Status]++
				drilled++
			}
		}
	}
	if drilled == 0 {
		return ""
	}
	return fmt.Sprintf("; restore drills of %d BackupEntries: %d restorable, %d not restorable, %d proved nothing",
		drilled, counts[gardencorev1beta1.ConditionTrue], counts[gardencorev1beta1.ConditionFalse], counts[gardencorev1beta1.ConditionUnknown])
}
