// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package etcdendpoint retires the Etcd endpoint webhook that earlier versions of this extension
// registered in the seed. The extension no longer admits or changes etcd-druid's Etcds: the
// etcd-backup secret carries the endpoint (`endpoint`, `domain`, `storageAPIEndpoint`), as the
// incumbents' secrets do, and etcd-backup-restore reads it from there, so an Etcd's spec is
// gardenlet's alone before, during and after a switch and a hand-back, and no etcd pod rolls for
// either (docs/etcd-backup-secret.md, "The endpoint"). What is left is the earlier versions'
// MutatingWebhookConfiguration: with failurePolicy Fail and nothing serving it any more, it would
// refuse every Etcd write in the provider's shoot namespaces, so every replica deletes it.
package etcdendpoint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Name is the name earlier versions served the webhook under (path "/"+Name).
const Name = "etcd-store-endpoint"

// ConfigName is the name of the MutatingWebhookConfiguration earlier versions of the binary of
// type typ registered.
func ConfigName(typ string) string { return "gardener-extension-backup-" + typ }

// WebhookName is the name of the one webhook in ConfigName(typ), as gardener's extensions library
// (BuildWebhookConfigs) named it.
func WebhookName(typ string) string {
	return Name + "." + ConfigName(typ) + ".extensions.gardener.cloud"
}

// Interval is how often a replica looks for the configuration. A replica of an earlier version
// still running during a rolling update re-creates it (gardener's certificate reconciler creates a
// missing configuration at its sync), so one look at start is not enough.
const Interval = 15 * time.Second

// Verdict is what the retirement does with what it found under ConfigName.
type Verdict int

const (
	// Absent means there is no configuration: nothing to do.
	Absent Verdict = iota
	// Delete means the configuration holds no webhook but the earlier versions' one.
	Delete
	// Foreign means it holds a webhook this extension never registered: it is left as it is.
	Foreign
)

func (v Verdict) String() string { return [...]string{"absent", "delete", "foreign"}[v] }

// Decide says what to do with cfg (nil: there is none) for the binary of type typ, and why.
func Decide(cfg *admissionregistrationv1.MutatingWebhookConfiguration, typ string) (Verdict, string) {
	if cfg == nil {
		return Absent, "no MutatingWebhookConfiguration " + ConfigName(typ)
	}
	var foreign []string
	for _, w := range cfg.Webhooks {
		if w.Name != WebhookName(typ) {
			foreign = append(foreign, w.Name)
		}
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		return Foreign, fmt.Sprintf("MutatingWebhookConfiguration %s holds webhooks this extension never registered (%s): left as it is", cfg.Name, strings.Join(foreign, ", "))
	}
	return Delete, fmt.Sprintf("MutatingWebhookConfiguration %s holds only the Etcd endpoint webhook of an earlier version", cfg.Name)
}

// Retirement deletes the earlier versions' configuration of the binary of type Type, at start and
// every Interval, in every replica (a delete is idempotent, and it must not wait for the leader
// lease, which the replica of the earlier version may hold). It never stops the manager: an error
// is logged and the next look tries again.
type Retirement struct {
	Client   client.Client
	Type     string
	Interval time.Duration
	Log      logr.Logger
}

// AddToManager adds the retirement of the binary of type typ to mgr. Its client reads from the
// API server, not the manager's cache: a cache would list and watch every webhook configuration
// of the seed, and the chart grants get and delete of this one only.
func AddToManager(mgr manager.Manager, typ string) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	return mgr.Add(Retirement{Client: c, Type: typ, Interval: Interval, Log: log.Log.WithName("etcd-endpoint-webhook-retirement")})
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica runs it.
func (Retirement) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable. A configuration left as Foreign is logged once, not at every
// look.
func (r Retirement) Start(ctx context.Context) error {
	last := Absent
	for {
		v, why, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Log.Error(err, "Retiring the Etcd endpoint webhook of an earlier version")
		case v == Foreign && last != Foreign:
			r.Log.Info("Not deleting the webhook configuration of an earlier version's name", "reason", why)
		}
		last = v
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.Interval):
		}
	}
}

// Once looks for the configuration and deletes it where Decide says so: only the version it read
// (a precondition on its UID and resourceVersion; one changed meanwhile is an error, and looked at
// again next time). It returns the verdict and its reason.
func (r Retirement) Once(ctx context.Context) (Verdict, string, error) {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ConfigName(r.Type)}, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			v, why := Decide(nil, r.Type)
			return v, why, nil
		}
		return Absent, "", fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", ConfigName(r.Type), err)
	}
	v, why := Decide(cfg, r.Type)
	if v != Delete {
		return v, why, nil
	}
	err := r.Client.Delete(ctx, cfg, client.Preconditions{UID: &cfg.UID, ResourceVersion: &cfg.ResourceVersion})
	if apierrors.IsNotFound(err) {
		return Absent, "deleted meanwhile", nil
	}
	if err != nil {
		return v, why, fmt.Errorf("deleting MutatingWebhookConfiguration %s: %w", cfg.Name, err)
	}
	r.Log.Info("Deleted the Etcd endpoint webhook configuration of an earlier version: this extension no longer admits Etcds", "reason", why)
	return v, why, nil
}
