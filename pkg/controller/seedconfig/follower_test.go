// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package seedconfig_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/seedconfig"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestTheFollowerTakesWhatTheControllersApplied: a follower (the restore drill's process) beside
// the applying controller waits while the seed declares an Extension not applied yet, then has
// each configuration the controller applied in force, keeps the last applied one while a change
// is refused, and has the defaults once the Extension is removed.
func TestTheFollowerTakesWhatTheControllersApplied(t *testing.T) {
	follower, err := provider.WithSeedConfig(provider.Register[*awsapi.BackupBucketConfig](awsOverMem{}), nil, awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := app.Scheme()
	mgr, err := manager.New(restConfig, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := seedconfig.AddFollowerToManager(ctx, mgr, follower, seedconfig.Options{Declared: true, Controller: controller.Options{SkipNameValidation: new(true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.InForce(); err == nil {
		t.Fatal("a declared Extension not applied yet: the follower acts on the defaults; want it waiting")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	inForce := func(want string) {
		t.Helper()
		eventually(t, func() error {
			raw, err := follower.InForce()
			if err != nil || !strings.Contains(string(raw), want) || (want == "" && len(raw) > 0) {
				return fmt.Errorf("the follower has %q (%v) in force; want %q", raw, err, want)
			}
			return nil
		})
	}

	start(t, "", true) // the controllers' process
	writeExtension(t, freshnessConfig("49h"))
	extensionOperation(t, gardencorev1beta1.LastOperationStateSucceeded)
	inForce(`"fullSnapshotMaxAge":"49h"`)
	writeExtension(t, ours+`,"handback":true}`)
	extensionOperation(t, gardencorev1beta1.LastOperationStateError)
	inForce(`"fullSnapshotMaxAge":"49h"`)
	removeExtension(t)
	inForce("")
}

// TestRecorded: the follower (the restore drill's process) puts in force what the controllers'
// process recorded as applied, and waits while nothing is recorded: a first configuration not
// applied yet or refused.
func TestRecorded(t *testing.T) {
	const applied = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`
	op := func(typ gardencorev1beta1.LastOperationType, state gardencorev1beta1.LastOperationState) *gardencorev1beta1.LastOperation {
		return &gardencorev1beta1.LastOperation{Type: typ, State: state}
	}
	ex := func(last *gardencorev1beta1.LastOperation, recorded string) *extensionsv1alpha1.Extension {
		e := &extensionsv1alpha1.Extension{}
		e.Status.LastOperation = last
		if recorded != "" {
			e.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(recorded)}
		}
		return e
	}
	deleting := ex(op(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateSucceeded), applied)
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, c := range []struct {
		name   string
		ex     *extensionsv1alpha1.Extension
		config string
		ready  bool
	}{
		{"no Extension: the defaults", nil, "", true},
		{"being deleted: the defaults", deleting, "", true},
		{"applied with a configuration", ex(op(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateSucceeded), applied), applied, true},
		{"applied without one", ex(op(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateSucceeded), ""), "", true},
		{"a newer one refused: the one recorded stays", ex(op(gardencorev1beta1.LastOperationTypeReconcile, gardencorev1beta1.LastOperationStateError), applied), applied, true},
		{"not applied yet", ex(nil, ""), "", false},
		{"the first one refused", ex(op(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateError), ""), "", false},
		{"in processing", ex(op(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing), ""), "", false},
	} {
		config, ready := seedconfig.Recorded(c.ex)
		if string(config) != c.config || ready != c.ready {
			t.Errorf("%s: %q, %t; want %q, %t", c.name, config, ready, c.config, c.ready)
		}
	}
}
