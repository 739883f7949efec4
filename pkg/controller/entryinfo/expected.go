// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reasons of an Unknown BackupsFresh for an entry whose shoot takes no snapshots now.
const (
	ReasonShootGone       = "ShootGone"
	ReasonShootHibernated = "ShootHibernated"
	// ReasonGardenGone: a garden's entry whose Garden is gone or being deleted (its virtual
	// garden's etcd, deleted first, takes no snapshots).
	ReasonGardenGone = "GardenGone"
)

// shootOfCluster is what the freshness verdict needs of the Shoot inside a Cluster resource.
type shootOfCluster struct {
	Spec struct {
		Hibernation *struct {
			Enabled *bool `json:"enabled"`
		} `json:"hibernation"`
	} `json:"spec"`
	Status struct {
		IsHibernated bool `json:"isHibernated"`
	} `json:"status"`
}

// SnapshotsNotExpected says why the entry's shoot takes no snapshots now, from the seed's Cluster
// resource of the shoot (named as the entry without its "--<shoot UID>" suffix): it is gone (the
// shoot was deleted; its entry waits out gardener's grace period) or the shoot is hibernated or
// going to be (its etcd does not run). "" when snapshots are expected. An age past the thresholds
// is then no sign of broken backups, and an alert on it would be false.
//
// A self-hosted shoot's `kube-system--<uid>` entry reads the Cluster `kube-system`, as gardenlet
// names it there (the control plane namespace). A garden's entry (IsGardenEntry) reads its Garden
// instead: a Garden gone or being deleted takes no snapshots; a garden does not hibernate.
func SnapshotsNotExpected(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry) (reason, message string, err error) {
	if IsGardenEntry(be) {
		return gardenSnapshotsNotExpected(ctx, reader, be)
	}
	i := strings.LastIndex(be.Name, "--")
	if i <= 0 {
		return "", "", nil // not a shoot's entry name: judged by its snapshots alone
	}
	cluster := &extensionsv1alpha1.Cluster{}
	if err := reader.Get(ctx, client.ObjectKey{Name: be.Name[:i]}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return ReasonShootGone, fmt.Sprintf("The seed has no Cluster %q: the shoot is gone, so no snapshots are expected", be.Name[:i]), nil
		}
		return "", "", fmt.Errorf("reading Cluster %s: %w", be.Name[:i], err)
	}
	var shoot shootOfCluster
	if cluster.Spec.Shoot.Raw != nil {
		if err := json.Unmarshal(cluster.Spec.Shoot.Raw, &shoot); err != nil {
			return "", "", fmt.Errorf("reading the shoot of Cluster %s: %w", be.Name[:i], err)
		}
	}
	if h := shoot.Spec.Hibernation; (h != nil && h.Enabled != nil && *h.Enabled) || shoot.Status.IsHibernated {
		return ReasonShootHibernated, "The shoot is hibernated (or hibernating or waking up): its etcd takes no snapshots", nil
	}
	return "", "", nil
}

// gardenSnapshotsNotExpected is SnapshotsNotExpected for a garden's entry.
func gardenSnapshotsNotExpected(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry) (reason, message string, err error) {
	uid, err := GardenUID(be)
	if err != nil {
		return "", "", nil //nolint:nilerr // judged by its snapshots alone; its location error is reported as such
	}
	garden, err := gardenOf(ctx, reader, uid)
	switch {
	case err != nil:
		return "", "", err
	case garden == nil:
		return ReasonGardenGone, fmt.Sprintf("The cluster has no Garden with UID %s: the garden is gone, so no snapshots are expected", uid), nil
	case garden.DeletionTimestamp != nil:
		return ReasonGardenGone, fmt.Sprintf("Garden %q is being deleted, its virtual garden's etcd first: no snapshots are expected", garden.Name), nil
	}
	return "", "", nil
}
