// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"os"
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// recordingSink records the calls of the Sink contract and writes nothing.
type recordingSink struct {
	calls []string
	v     Verdict
}

func (s *recordingSink) Start(context.Context, *extensionsv1alpha1.BackupEntry) error {
	s.calls = append(s.calls, "Start")
	return nil
}

func (s *recordingSink) Abandon(context.Context, *extensionsv1alpha1.BackupEntry) {
	s.calls = append(s.calls, "Abandon")
}

func (s *recordingSink) Publish(_ context.Context, _ *extensionsv1alpha1.BackupEntry, _, _ *drill.Status, v Verdict) error {
	s.calls = append(s.calls, "Publish")
	s.v = v
	return nil
}

// TestDrillerIntoAnotherSink: the Driller leaves its traces only in its Sink (Start, then
// Publish with the verdict), and the entry stays as it was on the API server: no condition, no
// drillStarted mark, no drill status. A drill whose ctx ends is Abandoned, never Published.
func TestDrillerIntoAnotherSink(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.chain("etcd-main")
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, client.ObjectKey{Name: entryName}, be); err != nil {
		t.Fatal(err)
	}
	read := be.DeepCopy()

	sink := &recordingSink{}
	st, v, err := f.r.driller().Drill(ctx, be, sink, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sink.calls, []string{"Start", "Publish"}) || sink.v != v || v.Status != gardencorev1beta1.ConditionTrue || len(st.Etcds) != 1 {
		t.Fatalf("calls %v, verdict %+v, status %+v; want Start, Publish with True for etcd-main", sink.calls, v, st)
	}
	after := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, client.ObjectKey{Name: entryName}, after); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(read, after) || !apiequality.Semantic.DeepEqual(read, be) {
		t.Fatalf("the entry changed: %+v", after.Status)
	}

	cancelled, cancel := context.WithCancel(ctx)
	f.restore = func(_ context.Context, ch drill.Chain, _ string, _ *os.File) drill.Result {
		cancel() // the process stops during the restore
		return drill.Result{Etcd: ch.Etcd, Err: context.Canceled}
	}
	sink = &recordingSink{}
	if _, _, err := f.r.driller().Drill(cancelled, be, sink, nil, nil); err == nil {
		t.Fatal("a drill whose ctx ended returned no error")
	}
	if !slices.Equal(sink.calls, []string{"Start", "Abandon"}) {
		t.Fatalf("calls %v; want Start, Abandon", sink.calls)
	}
}
