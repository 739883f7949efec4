// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"

	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// Providers are the extension types the chart serves: the one list in pkg/provider/all.
var Providers = all.Types()

// ChartOCIRepository is where released charts are pushed (the operator Extension pulls from it).
const ChartOCIRepository = "europe-docker.pkg.dev/gardener-extension-backup/releases/charts/gardener-extension-backup"

// Archive returns the chart as a .tgz, byte for byte the same for the same chart (sorted entries,
// no times), so that generated manifests change only when the chart does.
func Archive() ([]byte, error) {
	var files []string
	if err := fs.WalkDir(FS, ChartPath, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}); err != nil {
		return nil, err
	}
	sort.Strings(files)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := FS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: f, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Examples returns the registration manifests of provider, by file name: a ControllerDeployment
// carrying the chart and a ControllerRegistration for Gardener's garden cluster, and an operator
// Extension for gardener-operator.
func Examples(provider string) (map[string][]byte, error) {
	archive, err := Archive()
	if err != nil {
		return nil, err
	}
	values, err := json.Marshal(map[string]any{"provider": provider})
	if err != nil {
		return nil, err
	}
	name := "backup-" + provider
	resources := []gardencorev1beta1.ControllerResource{
		{Kind: "BackupBucket", Type: provider},
		{Kind: "BackupEntry", Type: provider},
		// The seed's Extension that holds this extension's seed configuration (a Seed's
		// spec.extensions entry of this type): for seeds only, never enabled by itself.
		{Kind: "Extension", Type: decode.ExtensionType(provider), ClusterCompatibility: []gardencorev1beta1.ClusterType{gardencorev1beta1.ClusterTypeSeed}},
	}
	deployment := &gardencorev1.ControllerDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1", Kind: "ControllerDeployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Helm:       &gardencorev1.HelmControllerDeployment{RawChart: archive, Values: &apiextensionsv1.JSON{Raw: values}},
	}
	registration := &gardencorev1beta1.ControllerRegistration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "ControllerRegistration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gardencorev1beta1.ControllerRegistrationSpec{
			Resources:  resources,
			Deployment: &gardencorev1beta1.ControllerRegistrationDeployment{DeploymentRefs: []gardencorev1beta1.DeploymentRef{{Name: name}}},
		},
	}
	extension := &operatorv1alpha1.Extension{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operator.gardener.cloud/v1alpha1", Kind: "Extension"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: operatorv1alpha1.ExtensionSpec{
			Resources: resources,
			Deployment: &operatorv1alpha1.Deployment{ExtensionDeployment: &operatorv1alpha1.ExtensionDeploymentSpec{
				DeploymentSpec: operatorv1alpha1.DeploymentSpec{Helm: &operatorv1alpha1.ExtensionHelm{
					OCIRepository: &gardencorev1.OCIRepository{Ref: ptr(ChartOCIRepository + ":0.1.0")},
				}},
				Values: &apiextensionsv1.JSON{Raw: values},
			}},
		},
	}
	out := map[string][]byte{}
	header := "# Generated from charts/gardener-extension-backup by `make examples`; do not edit.\n"
	reg, err := manifests(deployment, registration)
	if err != nil {
		return nil, err
	}
	out["controller-registration.yaml"] = append([]byte(header), reg...)
	rehearsalDeployment, rehearsalRegistration, err := RehearsalRegistration(provider, archive)
	if err != nil {
		return nil, err
	}
	rehearsal, err := manifests(rehearsalDeployment, rehearsalRegistration)
	if err != nil {
		return nil, err
	}
	out["rehearsal-registration.yaml"] = append([]byte(header+rehearsalHeader), rehearsal...)
	ext, err := manifests(extension)
	if err != nil {
		return nil, err
	}
	out["extension.yaml"] = append([]byte(header), ext...)
	return out, nil
}

// rehearsalHeader says how the rehearsal registration is used, in the generated file.
const rehearsalHeader = `# The rehearsal of the takeover (values rehearse: true), beside the incumbent provider extension,
# which stays primary for BackupBucket and BackupEntry. It registers only the seed's Extension
# backup-<provider>, so gardenlet installs it only in the seeds whose Seed declares that
# Extension in spec.extensions: declare it in the seeds to rehearse. Delete this registration
# before the switch applies controller-registration.yaml (both register that Extension as
# primary; gardener admits one).
`

// RehearsalRegistration is the ControllerDeployment (the chart archive with rehearse: true) and
// the ControllerRegistration of provider's rehearsal: the seed's Extension backup-<provider>
// (class seed) only. Gardener installs a registration where a kind/type it lists is needed; the
// BackupBucket and BackupEntry of the type are needed in every seed whose backup uses it, so
// listing them (even with primary: false) would install the rehearsal in all those seeds, and a
// seedSelector, which would narrow it, is refused with any primary resource. The Extension is
// needed only where the Seed declares it: that is the per-seed switch of the rehearsal.
func RehearsalRegistration(provider string, archive []byte) (*gardencorev1.ControllerDeployment, *gardencorev1beta1.ControllerRegistration, error) {
	values, err := json.Marshal(map[string]any{"provider": provider, "rehearse": true})
	if err != nil {
		return nil, nil, err
	}
	name := "backup-" + provider + "-rehearsal"
	deployment := &gardencorev1.ControllerDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1", Kind: "ControllerDeployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Helm:       &gardencorev1.HelmControllerDeployment{RawChart: archive, Values: &apiextensionsv1.JSON{Raw: values}},
	}
	registration := &gardencorev1beta1.ControllerRegistration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "ControllerRegistration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gardencorev1beta1.ControllerRegistrationSpec{
			Resources: []gardencorev1beta1.ControllerResource{
				{Kind: "Extension", Type: decode.ExtensionType(provider), ClusterCompatibility: []gardencorev1beta1.ClusterType{gardencorev1beta1.ClusterTypeSeed}},
			},
			Deployment: &gardencorev1beta1.ControllerRegistrationDeployment{DeploymentRefs: []gardencorev1beta1.DeploymentRef{{Name: name}}},
		},
	}
	return deployment, registration, nil
}

func manifests(objs ...any) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Base(fmt.Sprintf("%T", o)), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }
