// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package gcp_test runs the real gcp controllers in a manager against a real kube-apiserver and
// etcd (envtest) and fake-gcs-server behind the GCS stand-in front (gcpstack.GCS), driven the way
// gardenlet drives them.
package gcp_test

import (
	"fmt"
	"os"
	"testing"

	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

const (
	region = "europe-west1"
	// foreignPrefix names buckets the front plays as owned by another project.
	foreignPrefix = "foreign-"
)

var (
	env *framework.Env
	gcs *gcpstack.GCS
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if gcs, err = gcpstack.StartGCS(gcpstack.GCSOptions{ForeignPrefix: foreignPrefix}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer gcs.Stop()
	if env, err = framework.Start(&gcpprovider.Provider{IAMEndpoint: gcs.URL + "/", QuotasEndpoint: gcs.URL + "/"}, region); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
