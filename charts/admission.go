// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package charts

import (
	"embed"
	"fmt"
	"io"
	"strings"

	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	"github.com/gardener/gardener/pkg/chartrenderer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/version"
)

// The admission's two charts, as provider extensions ship theirs: the runtime part (Deployment,
// Service, RBAC in the cluster it runs in) and the application part (RBAC in the (virtual) garden,
// where the admission registers its webhook configuration itself).
const (
	AdmissionRuntimePath     = "gardener-extension-backup-admission/charts/runtime"
	AdmissionApplicationPath = "gardener-extension-backup-admission/charts/application"
)

// AdmissionFS holds the admission's charts.
//
//go:embed all:gardener-extension-backup-admission
var AdmissionFS embed.FS

// RenderAdmission renders the admission chart at path (AdmissionRuntimePath or
// AdmissionApplicationPath) with values as release "backup-admission" in namespace.
func RenderAdmission(path, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	r := chartrenderer.NewWithServerVersion(&version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4"})
	rendered, err := r.RenderEmbeddedFS(AdmissionFS, path, "backup-admission", namespace, values)
	if err != nil {
		return nil, err
	}
	return decodeManifest(rendered.Manifest())
}

// decodeManifest returns the objects of a rendered chart in install order.
func decodeManifest(manifest []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(string(manifest)), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding the rendered chart: %w", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// AdmissionExtension returns the gardener-operator Extension that deploys the admission into a
// virtual garden: its runtime and application charts, pulled from the OCI references runtimeChart
// and applicationChart. One serves every provider type (it registers one webhook configuration),
// so it is an Extension of its own, with no resources, beside the providers' Extensions.
func AdmissionExtension(runtimeChart, applicationChart string) *operatorv1alpha1.Extension {
	return &operatorv1alpha1.Extension{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operator.gardener.cloud/v1alpha1", Kind: "Extension"},
		ObjectMeta: metav1.ObjectMeta{Name: "backup-admission"},
		Spec: operatorv1alpha1.ExtensionSpec{
			Deployment: &operatorv1alpha1.Deployment{AdmissionDeployment: &operatorv1alpha1.AdmissionDeploymentSpec{
				RuntimeCluster: &operatorv1alpha1.DeploymentSpec{Helm: &operatorv1alpha1.ExtensionHelm{OCIRepository: &gardencorev1.OCIRepository{Ref: &runtimeChart}}},
				VirtualCluster: &operatorv1alpha1.DeploymentSpec{Helm: &operatorv1alpha1.ExtensionHelm{OCIRepository: &gardencorev1.OCIRepository{Ref: &applicationChart}}},
			}},
		},
	}
}

// AdmissionExamples are the admission's manifests for DefaultRelease (see AdmissionExamplesFor).
func AdmissionExamples() (map[string][]byte, error) {
	r, err := DefaultRelease()
	if err != nil {
		return nil, err
	}
	return AdmissionExamplesFor(r)
}

// AdmissionExamplesFor returns the admission's manifests for release r, by file name:
// extension.yaml, the AdmissionExtension pulling r's admission charts from their OCI
// repositories.
func AdmissionExamplesFor(r Release) (map[string][]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	ext, err := manifests(AdmissionExtension(r.AdmissionRuntimeChartRef(), r.AdmissionApplicationChartRef()))
	if err != nil {
		return nil, err
	}
	header := "# Generated from charts/gardener-extension-backup-admission by `make examples`; do not edit.\n"
	return map[string][]byte{"extension.yaml": append([]byte(header), ext...)}, nil
}
