// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"context"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/all"
)

// extra is a provider's own consumer cases beyond the operator's credentials (generated
// credentials, refused secrets), run on the same started stand-in and controllers; the files named
// for a provider register theirs in init. A provider needs none.
type extra struct {
	// serial: the stand-in's cases, the operator's among them, run one after another.
	serial bool
	cases  func(t *testing.T, s standin.StandIn, w *standin.World, env *framework.Env)
}

var extras = map[string]extra{}

// TestConsumer runs the consumer contract on every registered stand-in (test/standin): with the
// operator's credentials of the stand-in, etcd-backup holds exactly the keys the stand-in names,
// and the real etcd-backup-restore (the pinned version and the one before) backs up and restores
// with it; then the provider's extras.
// Select a provider with -run 'TestConsumer/<type>'.
func TestConsumer(t *testing.T) {
	for _, s := range standin.All() {
		t.Run(s.Type, func(t *testing.T) {
			t.Parallel()
			w, err := s.Start(context.Background(), t, s.Region)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			env, err := framework.StartCloud(w.Cloud, s.Region, framework.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(env.Stop)
			x := extras[s.Type]
			t.Run("operator credentials", func(t *testing.T) {
				if !x.serial {
					t.Parallel()
				}
				run(t, env, w.Consumer, mode{name: "operator credentials", operator: w.Operator, config: w.ProviderConfig, keys: s.EtcdBackupKeys})
			})
			// The same with the etcd-backup-restore before the pinned one, which landscapes that
			// have not moved yet run.
			t.Run("operator credentials, previous etcd-backup-restore", func(t *testing.T) {
				if !x.serial {
					t.Parallel()
				}
				run(t, env, previous(t, w.Consumer), mode{name: "operator credentials", operator: w.Operator, config: w.ProviderConfig, keys: s.EtcdBackupKeys})
			})
			if x.cases != nil {
				x.cases(t, s, w, env)
			}
		})
	}
}

// previous is c running the etcd-backup-restore before the pinned one.
func previous(t *testing.T, c stack.Consumer) stack.Consumer {
	t.Helper()
	bin, err := stack.PreviousEtcdbrctl()
	if err != nil {
		t.Fatal(err)
	}
	c.Binary = bin
	return c
}
