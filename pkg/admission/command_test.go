// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// TestCommandRefusesBadFlags: a flag the admission cannot serve stops it before it registers
// anything, naming the flag.
func TestCommandRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook-config-namespace=garden", "--webhook-failure-policy=Maybe"}, "--webhook-failure-policy"},
		{[]string{}, "--webhook-config-namespace"},
		{[]string{"--webhook-config-namespace=garden", "--disable-webhooks=provider-alicloud"}, "provider-alicloud"},
	} {
		cmd := admission.NewCommand(admission.Validator{APIs: all.APIs()})
		cmd.SetArgs(append([]string{"--kubeconfig=" + kubeconfig, "--leader-election=false", "--metrics-bind-address=0", "--health-bind-address=0"}, c.args...))
		cmd.SilenceErrors = true
		if err := cmd.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("args %v: %v; want an error naming %s", c.args, err, c.want)
		}
	}
}

// TestCommandReadsGardenKubeconfig: without --kubeconfig the admission reaches the garden through
// GARDEN_KUBECONFIG, which gardener-operator injects into the runtime part's Deployment.
func TestCommandReadsGardenKubeconfig(t *testing.T) {
	t.Setenv("GARDEN_KUBECONFIG", kubeconfig)
	cmd := admission.NewCommand(admission.Validator{APIs: all.APIs()})
	// A refusal that comes after the kubeconfig is read: reaching it shows the kubeconfig was found.
	cmd.SetArgs([]string{"--leader-election=false", "--webhook-config-namespace=garden", "--webhook-failure-policy=Maybe"})
	cmd.SilenceErrors = true
	if err := cmd.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "--webhook-failure-policy") {
		t.Fatalf("%v; want the failure policy's refusal, after the garden's kubeconfig was read", err)
	}
}
