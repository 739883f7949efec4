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
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	gardencorev1 "github.com/gardener/gardener/pkg/apis/core/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	"github.com/google/go-containerregistry/pkg/name"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// Providers are the extension types the chart serves: the one list in pkg/provider/all.
var Providers = all.Types()

// Release names where one release's images and chart live: the images
// <Registry>/gardener-extension-backup-<provider>:<Tag> (and -admission), the chart
// <Registry>/charts/gardener-extension-backup:<Tag>, its version Tag.
type Release struct {
	Registry string
	Tag      string
}

// With is r with registry and tag where they are not empty.
func (r Release) With(registry, tag string) Release {
	if registry != "" {
		r.Registry = registry
	}
	if tag != "" {
		r.Tag = tag
	}
	return r
}

// ChartRepository is the OCI repository of the release's seed chart.
func (r Release) ChartRepository() string { return r.Registry + "/charts/" + ChartPath }

// ChartRef is the release's seed chart as an OCI reference (repository:tag).
func (r Release) ChartRef() string { return r.ChartRefOf(SeedChart) }

// ImageRepository is the repository of binary's image (a provider type or "admission").
func (r Release) ImageRepository(binary string) string {
	return r.Registry + "/gardener-extension-backup-" + binary
}

// Image is the image of binary (a provider type or "admission") in the release.
func (r Release) Image(binary string) string { return r.ImageRepository(binary) + ":" + r.Tag }

// validate refuses a release whose references a registry or helm would not take: the tag is
// the chart's version, so it is a semantic version.
func (r Release) validate() error {
	if _, err := name.NewTag(r.Image("aws"), name.StrictValidation); err != nil {
		return fmt.Errorf("image registry %q and tag %q: %w", r.Registry, r.Tag, err)
	}
	if _, err := semver.NewVersion(r.Tag); err != nil {
		return fmt.Errorf("image tag %q is the chart's version and must be a semantic version: %w", r.Tag, err)
	}
	return nil
}

const valuesYAMLPath = ChartPath + "/values.yaml"

// DefaultRelease is the release values.yaml's image block names.
func DefaultRelease() (Release, error) {
	data, err := FS.ReadFile(valuesYAMLPath)
	if err != nil {
		return Release{}, err
	}
	var values struct {
		Image struct{ Registry, Tag string }
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return Release{}, fmt.Errorf("%s: %w", valuesYAMLPath, err)
	}
	return Release{Registry: values.Image.Registry, Tag: values.Image.Tag}, nil
}

// Archive is the chart of DefaultRelease as a .tgz (see Package).
func Archive() ([]byte, error) {
	r, err := DefaultRelease()
	if err != nil {
		return nil, err
	}
	archive, _, err := Package(r)
	return archive, err
}

// Package is the seed chart as release r ships it (see Chart.Package).
func Package(r Release) (archive, chartYAML []byte, err error) { return SeedChart.Package(r) }

// Package is chart c as release r ships it, as a .tgz (what helm package writes: entries
// under the chart's name) and its Chart.yaml: version and appVersion r.Tag, values.yaml's
// image block r's image (comments and order kept), both read back. It is byte for byte the
// same for the same chart and r (sorted entries, no times), so that generated manifests change
// only when either does.
func (c Chart) Package(r Release) (archive, chartYAML []byte, err error) {
	if err := r.validate(); err != nil {
		return nil, nil, err
	}
	chartPath, valuesPath := c.dir+"/Chart.yaml", c.dir+"/values.yaml"
	chart, err := fs.ReadFile(c.fsys, chartPath)
	if err != nil {
		return nil, nil, err
	}
	if chart, err = setLines(chart, "", map[string]string{"version": r.Tag, "appVersion": strconv.Quote(r.Tag)}); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", chartPath, err)
	}
	values, err := fs.ReadFile(c.fsys, valuesPath)
	if err != nil {
		return nil, nil, err
	}
	var image map[string]string
	if c.image != nil {
		image = c.image(r)
		if values, err = setLines(values, "image", image); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", valuesPath, err)
		}
	}
	if err := c.check(r, chart, values, image); err != nil {
		return nil, nil, fmt.Errorf("the packaged chart %s does not name release %+v: %w", c.Name, r, err)
	}
	archive, err = c.tgz(map[string][]byte{chartPath: chart, valuesPath: values})
	return archive, chart, err
}

// setLines sets the scalar of each key in values, in place (comments and order kept): the
// top-level keys if block is "", else the keys indented by two spaces under the top-level key
// block. Every key must be there.
func setLines(data []byte, block string, values map[string]string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	indent, in := "", block == ""
	if block != "" {
		indent = "  "
	}
	set := map[string]bool{}
	for i, l := range lines {
		if block != "" {
			switch {
			case strings.HasPrefix(l, block+":"):
				in = true
				continue
			case l != "\n" && !strings.HasPrefix(l, " "):
				in = false
			}
		}
		if !in {
			continue
		}
		for key, v := range values {
			if strings.HasPrefix(l, indent+key+":") {
				lines[i] = indent + key + ": " + v + "\n"
				set[key] = true
			}
		}
	}
	for key := range values {
		if !set[key] {
			return nil, fmt.Errorf("no line %s%s", strings.TrimPrefix(block+".", "."), key)
		}
	}
	return []byte(strings.Join(lines, "")), nil
}

// check reads the packaged Chart.yaml and values.yaml back as helm will: the chart's name,
// version and appVersion r.Tag, and under values.yaml's image each key of image (YAML scalars).
func (c Chart) check(r Release, chartYAML, valuesYAML []byte, image map[string]string) error {
	var chart struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Image map[string]any `json:"image"`
	}
	if err := yaml.Unmarshal(chartYAML, &chart); err != nil {
		return err
	}
	if err := yaml.Unmarshal(valuesYAML, &values); err != nil {
		return err
	}
	if chart.Name != c.Name || chart.Version != r.Tag || chart.AppVersion != r.Tag {
		return fmt.Errorf("the chart's Chart.yaml names chart %q version %q appVersion %q; want %q version and appVersion %q", chart.Name, chart.Version, chart.AppVersion, c.Name, r.Tag)
	}
	for key, scalar := range image {
		var want any
		if err := yaml.Unmarshal([]byte(scalar), &want); err != nil {
			return fmt.Errorf("image.%s %s: %w", key, scalar, err)
		}
		if got := values.Image[key]; got != want {
			return fmt.Errorf("values.yaml's image.%s is %v; want %v", key, got, want)
		}
	}
	return nil
}

// tgz archives the chart's files under c.Name, replacing those in replace (by path in c.fsys).
func (c Chart) tgz(replace map[string][]byte) ([]byte, error) {
	var files []string
	if err := fs.WalkDir(c.fsys, c.dir, func(p string, d fs.DirEntry, err error) error {
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
		data, ok := replace[f]
		if !ok {
			var err error
			if data, err = fs.ReadFile(c.fsys, f); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Name: c.Name + strings.TrimPrefix(f, c.dir), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
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

// Examples are the registration manifests of provider for DefaultRelease (see ExamplesFor).
func Examples(provider string) (map[string][]byte, error) {
	r, err := DefaultRelease()
	if err != nil {
		return nil, err
	}
	return ExamplesFor(provider, r)
}

// ExamplesFor returns the registration manifests of provider for release r, by file name: a
// ControllerDeployment carrying r's chart and a ControllerRegistration for Gardener's garden
// cluster, and an operator Extension pulling r's chart from its OCI repository. Both set the
// values provider and image (r's registry and tag).
func ExamplesFor(provider string, r Release) (map[string][]byte, error) {
	archive, _, err := Package(r)
	if err != nil {
		return nil, err
	}
	values, err := json.Marshal(map[string]any{"provider": provider, "image": map[string]string{"registry": r.Registry, "tag": r.Tag}})
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
					OCIRepository: &gardencorev1.OCIRepository{Ref: ptr(r.ChartRef())},
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
# primary; gardener admits one). With injectGardenKubeconfig, the rehearsal also sets its
# condition Rehearsal on its own ControllerInstallation in the garden.
`

// RehearsalRegistration is the ControllerDeployment (the chart archive with rehearse: true, and
// injectGardenKubeconfig) and the ControllerRegistration of provider's rehearsal: the seed's
// Extension backup-<provider> (class seed) only. Gardener installs a registration where a kind/type it lists is needed; the
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
		// gardenlet gives the rehearsal a garden kubeconfig (GARDEN_KUBECONFIG): it copies its
		// condition Rehearsal to its own ControllerInstallation there (rehearsal.Garden).
		InjectGardenKubeconfig: ptr(true),
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
