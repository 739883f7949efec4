// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
)

// The environment gardenlet gives the rehearsal's containers: SEED_NAME always, GARDEN_KUBECONFIG
// where the ControllerDeployment sets injectGardenKubeconfig (a kubeconfig with the token of the
// garden ServiceAccount seed-<seed>/extension-<ControllerInstallation name>).
const (
	EnvGardenKubeconfig = v1beta1constants.EnvGenericGardenKubeconfig
	EnvSeedName         = v1beta1constants.EnvSeedName
)

// DefaultGardenTimeout bounds the garden's requests of one pass.
const DefaultGardenTimeout = 30 * time.Second

// installationNamespacePrefix: gardenlet installs a seed's ControllerInstallation <name> into the
// seed's namespace extension-<name> (gardenerutils.NamespaceNameForControllerInstallation), the
// release namespace of the rehearsal's chart.
const installationNamespacePrefix = "extension-"

// Garden is the rehearsal's own ControllerInstallation in the garden, where the condition
// Rehearsal of the seed's Extension is copied so that the operator reads it from the garden. It
// ends with the ControllerInstallation: deleting the rehearsal registration deletes it.
type Garden struct {
	// Client reaches the garden as the extension's ServiceAccount: gardener's SeedAuthorizer lets
	// it get and patch (status included) the ControllerInstallations of its seed.
	Client client.Client
	// Seed is the seed's name; ControllerInstallation the name of the rehearsal's.
	Seed, ControllerInstallation string
	// Timeout bounds the garden's requests of one pass (zero: DefaultGardenTimeout): a garden
	// that does not answer must not hold up the seed's condition.
	Timeout time.Duration
	// err is why Client could not be made (the kubeconfig did not load): every write fails
	// with it, so that each pass says so.
	err error
}

// NewGarden is the Garden of the rehearsal installed in namespace (the release namespace) of seed
// with the garden kubeconfig kubeconfig. Without one of them there is no garden to write to: nil
// and why, for the log. A kubeconfig that does not load is a Garden whose writes fail with that
// error: the seed's report goes on, and says so.
func NewGarden(kubeconfig, seed, namespace string) (*Garden, string) {
	name, ok := strings.CutPrefix(namespace, installationNamespacePrefix)
	switch {
	case kubeconfig == "":
		return nil, "no garden kubeconfig (--garden-kubeconfig, " + EnvGardenKubeconfig + ", which gardenlet sets where the ControllerDeployment has injectGardenKubeconfig: true)"
	case seed == "":
		return nil, "no seed name (--seed-name, " + EnvSeedName + ")"
	case !ok || name == "":
		return nil, fmt.Sprintf("namespace %q is not a ControllerInstallation's (%s<name>): gardenlet did not install the rehearsal", namespace, installationNamespacePrefix)
	}
	g := &Garden{Seed: seed, ControllerInstallation: name}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err == nil {
		g.Client, err = client.New(cfg, client.Options{Scheme: gardenScheme})
	}
	if err != nil {
		g.err = fmt.Errorf("loading the garden kubeconfig %s: %w", kubeconfig, err)
	}
	return g, ""
}

// gardenScheme has the garden's kinds the rehearsal reads and writes.
var gardenScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{gardencorev1beta1.AddToScheme, authenticationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// ErrNotOurs is the error of a ControllerInstallation, named by the namespace, not of this seed,
// or not the one whose garden ServiceAccount the garden kubeconfig is.
var ErrNotOurs = errors.New("not the rehearsal's ControllerInstallation")

// ServiceAccountUsername is the garden user gardenlet gives the extensions of ControllerInstallation
// name on seed: ServiceAccount extension-<name> (v1beta1constants.ExtensionGardenServiceAccountPrefix)
// in the seed's namespace seed-<seed> (gardenerutils.ComputeGardenNamespace), as the API server
// names a ServiceAccount's user (serviceaccount.MakeUsername). gardener's SeedAuthorizer knows
// it as an extension of seed, and lets it patch every ControllerInstallation of seed: that grant
// does not tell which one is the rehearsal's; this name does.
func ServiceAccountUsername(seed, name string) string {
	return "system:serviceaccount:seed-" + seed + ":" + v1beta1constants.ExtensionGardenServiceAccountPrefix + name
}

// verifyIdentity asks the garden who the garden kubeconfig is (a SelfSubjectReview, which every
// authenticated user may create) and fails with ErrNotOurs unless it is the garden
// ServiceAccount of g's ControllerInstallation: the namespace that named the ControllerInstallation
// alone is not proof enough to write onto it.
func (g *Garden) verifyIdentity(ctx context.Context) error {
	review := &authenticationv1.SelfSubjectReview{}
	if err := g.Client.Create(ctx, review); err != nil {
		return fmt.Errorf("asking the garden who the garden kubeconfig is (a SelfSubjectReview): %w", err)
	}
	if got, want := review.Status.UserInfo.Username, ServiceAccountUsername(g.Seed, g.ControllerInstallation); got != want {
		return fmt.Errorf("the garden kubeconfig is %q, not %q, the garden ServiceAccount gardenlet gives ControllerInstallation %s of seed %s (named by the release namespace %s%s): refusing to write onto it: %w",
			got, want, g.ControllerInstallation, g.Seed, installationNamespacePrefix, g.ControllerInstallation, ErrNotOurs)
	}
	return nil
}

// SetCondition sets the condition Rehearsal on the ControllerInstallation: one strategic merge
// patch of status.conditions (merged by type, as gardenlet's writes of Valid, Installed, Healthy,
// Progressing and Required are) that holds that condition only, so that gardenlet's stay as they
// are whatever this process read. LastTransitionTime moves only when the status changes. It writes
// only where the garden kubeconfig is the ControllerInstallation's own ServiceAccount
// (verifyIdentity).
func (g *Garden) SetCondition(ctx context.Context, status gardencorev1beta1.ConditionStatus, reason, msg string, now time.Time) error {
	if g.err != nil {
		return g.err
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(g.Timeout, DefaultGardenTimeout))
	defer cancel()
	if err := g.verifyIdentity(ctx); err != nil {
		return err
	}
	ci := &gardencorev1beta1.ControllerInstallation{}
	if err := g.Client.Get(ctx, client.ObjectKey{Name: g.ControllerInstallation}, ci); err != nil {
		return fmt.Errorf("reading ControllerInstallation %s: %w", g.ControllerInstallation, err)
	}
	if ref := ci.Spec.SeedRef; ref == nil || ref.Name != g.Seed {
		return fmt.Errorf("ControllerInstallation %s is not of seed %s (spec.seedRef %v): %w", ci.Name, g.Seed, ref, ErrNotOurs)
	}
	conditions, _ := extstatus.SetCondition(ci.Status.Conditions, ConditionRehearsal, status, reason, msg, now)
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"conditions": []gardencorev1beta1.Condition{*v1beta1helper.GetCondition(conditions, ConditionRehearsal)},
	}})
	if err != nil {
		return err
	}
	if err := g.Client.Status().Patch(ctx, ci, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return fmt.Errorf("patching the condition %s of ControllerInstallation %s: %w", ConditionRehearsal, ci.Name, err)
	}
	return nil
}

// gardenNote is what the seed's condition adds when the garden's copy could not be written.
func (g *Garden) gardenNote(err error) string {
	return fmt.Sprintf("This condition could not be copied to ControllerInstallation %s in the garden: %v. ", g.ControllerInstallation, err)
}

// copyToGarden sets the condition on r.Garden's ControllerInstallation and returns msg for the
// seed's condition: as it is, or, where the garden's copy failed, with why in front (the end of a
// long message may be cut). A failure is logged and never fails the seed's report.
func (r *Rehearser) copyToGarden(ctx context.Context, status gardencorev1beta1.ConditionStatus, reason, msg string, now time.Time) string {
	if r.Garden == nil {
		return msg
	}
	if err := r.Garden.SetCondition(ctx, status, reason, msg, now); err != nil {
		r.Log.Error(err, "The condition could not be copied to the garden", "condition", ConditionRehearsal, "controllerInstallation", r.Garden.ControllerInstallation)
		return extstatus.EventNote(r.Garden.gardenNote(err) + msg)
	}
	return msg
}
