// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package incumbentadmission runs what keeps running of the provider extensions after their
// backup controllers are switched off (provider-aws v1.73.0's and provider-gcp v1.53.4's garden
// validators of Seeds and BackupBuckets, provider-gcp's seedprovider ensurer of Etcds; built from
// test/incumbent/admission) on every example, every BackupBucketConfig documented in docs/*.md and
// every step of docs/migrating.md, placed as docs/migrating.md says ("Where this extension's
// settings live": this extension's own settings in the Seed's spec.extensions), and fails on a refusal, by them or by this extension's own decoding.
package incumbentadmission_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// check and verdict are test/incumbent/admission's input and output (its main.go).
type check struct {
	Name                        string          `json:"name"`
	Provider                    string          `json:"provider"`
	Object                      string          `json:"object"`
	Old                         json.RawMessage `json:"old,omitempty"`
	New                         json.RawMessage `json:"new,omitempty"`
	HasOld                      bool            `json:"hasOld,omitempty"`
	AllowedEndpointOverrideURLs []string        `json:"allowedEndpointOverrideURLs,omitempty"`
	// Extensions, OldExtensions are the Seed's spec.extensions, where this extension's seed
	// configuration lives.
	Extensions    []extension `json:"extensions,omitempty"`
	OldExtensions []extension `json:"oldExtensions,omitempty"`
}

// extension is an entry of a Seed's spec.extensions.
type extension struct {
	Type           string          `json:"type"`
	ProviderConfig json.RawMessage `json:"providerConfig,omitempty"`
}

// seedExtensions is the Seed's spec.extensions holding seedConfig for provider typ (none for
// none).
func seedExtensions(typ string, seedConfig json.RawMessage) []extension {
	if seedConfig == nil {
		return nil
	}
	return []extension{{Type: decode.ExtensionType(typ), ProviderConfig: seedConfig}}
}

type verdict struct {
	Name             string  `json:"name"`
	Allowed          bool    `json:"allowed"`
	Message          string  `json:"message"`
	EndpointOverride *string `json:"endpointOverride"`
}

// runIncumbents is the incumbents' code on the checks: $INCUMBENT_ADMISSION (make test builds it
// with hack/incumbent.sh admission), else built here.
func runIncumbents(t *testing.T, checks []check) map[string]verdict {
	t.Helper()
	bin := os.Getenv("INCUMBENT_ADMISSION")
	if bin == "" {
		root, err := stack.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(t.TempDir(), "incumbent-admission")
		t.Log("building provider-aws v1.73.0's and provider-gcp v1.53.4's admission (test/incumbent/admission); the first build downloads their modules")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join(root, "test", "incumbent", "admission")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the incumbents' admission: %v\n%s", err, b)
		}
	}
	in, err := json.Marshal(checks)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	var verdicts []verdict
	if err := json.Unmarshal(out, &verdicts); err != nil {
		t.Fatalf("reading the verdicts: %v\n%s", err, out)
	}
	if len(verdicts) != len(checks) {
		t.Fatalf("%d verdicts for %d checks", len(verdicts), len(checks))
	}
	byName := map[string]verdict{}
	for _, v := range verdicts {
		byName[v.Name] = v
	}
	return byName
}

// A placement is a documented configuration as it reaches the seed: the Seed's
// spec.backup.providerConfig (which gardenlet copies into the BackupBucket) and the seed
// configuration (the Seed's spec.extensions entry of type backup-<provider>).
type placement struct {
	source         string
	typ            string
	providerConfig map[string]any // nil: none
	seedConfig     map[string]any // nil: none
}

func incumbentAPIVersion(typ string) string {
	return typ + ".provider.extensions.gardener.cloud/v1alpha1"
}
func ourAPIVersion(typ string) string { return typ + ".backup.extensions.gardener.cloud/v1alpha1" }

// place is docs/migrating.md's rule: the incumbent's fields (config.API's IncumbentFields) in the
// providerConfig with the incumbent's apiVersion, which is always there (provider-gcp's webhook
// fails every Etcd of a seed whose BackupBucket has no providerConfig); every other field in the
// seed configuration with this extension's apiVersion.
func place(source, typ string, cfg map[string]any) placement {
	api := all.APIs()[typ]
	if typ == "local" {
		// Gardener's local setup: no provider extension reads a local providerConfig but this one.
		pc := map[string]any{"apiVersion": ourAPIVersion(typ), "kind": "BackupBucketConfig"}
		for k, v := range cfg {
			if k != "apiVersion" && k != "kind" {
				pc[k] = v
			}
		}
		return placement{source: source, typ: typ, providerConfig: pc}
	}
	pc := map[string]any{"apiVersion": incumbentAPIVersion(typ), "kind": "BackupBucketConfig"}
	sc := map[string]any{"apiVersion": ourAPIVersion(typ), "kind": "BackupBucketConfig"}
	for k, v := range cfg {
		switch {
		case k == "apiVersion" || k == "kind":
		case slices.Contains(api.IncumbentFields(), k):
			pc[k] = v
		default:
			sc[k] = v
		}
	}
	p := placement{source: source, typ: typ, providerConfig: pc}
	if len(sc) > 2 {
		p.seedConfig = sc
	}
	return p
}

func jsonOf(t *testing.T, v map[string]any) json.RawMessage {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fenced is a fenced ```yaml block of a Markdown file.
var fenced = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// notConfigs are the YAML blocks of docs/*.md that hold no backup configuration, by file and first
// line; every other block must yield one, so that no documented configuration goes unchecked.
var notConfigs = map[string][]string{
	"azure.md":         {"# --azure-cloud-config=/etc/azure/cloud.yaml (YAML or JSON, strictly decoded)"},
	"gcp.md":           {"title: Gardener etcd backup buckets"},
	"observability.md": {"providerStatus:"},
	"deploying.md":     {"values:"},
}

// fragmentProviders are, per provider page, the providers whose BackupBucketConfig a fragment
// (a block without apiVersion and kind) may hold: it is checked with each provider whose
// documentation it is in, or with every provider in a provider-neutral page.
var fragmentProviders = map[string][]string{
	"aws.md": {"aws"}, "gcp.md": {"gcp"}, "azure.md": {"azure"}, "openstack.md": {"openstack"}, "local.md": {"local"},
	"observability.md": {"aws", "azure", "gcp", "local", "openstack"},
	"copy.md":          {"aws"}, // its fragments continue its first block, an aws Seed
}

// documented returns every configuration of the examples and docs/*.md.
func documented(t *testing.T, root string) []placement {
	t.Helper()
	var out []placement
	for _, typ := range all.Types() {
		file := filepath.Join("example", typ, "backupbucket.yaml")
		var bb struct {
			Spec struct {
				Type           string         `json:"type"`
				ProviderConfig map[string]any `json:"providerConfig"`
			} `json:"spec"`
		}
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &bb); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// The example is the BackupBucket gardenlet makes of the Seed: its providerConfig as it
		// is, without a seed configuration.
		out = append(out, placement{source: file, typ: bb.Spec.Type, providerConfig: bb.Spec.ProviderConfig})
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		name := filepath.Base(doc)
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if loose := unfenced.Find(fenced.ReplaceAll(data, nil)); loose != nil {
			t.Errorf("docs/%s: a configuration outside a fenced yaml block goes unchecked: %q", name, loose)
		}
		for i, m := range fenced.FindAllSubmatch(data, -1) {
			block := string(m[1])
			source := fmt.Sprintf("docs/%s, YAML block %d", name, i+1)
			first, _, _ := strings.Cut(block, "\n")
			if slices.Contains(notConfigs[name], first) {
				continue
			}
			if strings.HasPrefix(first, "# step: ") {
				continue // a step of docs/migrating.md: TestMigratingSteps
			}
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
				t.Errorf("%s: not YAML: %v", source, err)
				continue
			}
			if seed, ok := seedPlacements(source, doc); ok {
				if len(seed) == 0 {
					t.Errorf("%s: a Seed without an extension of this extension's types", source)
				}
				out = append(out, seed...)
				continue
			}
			if kind, _ := doc["kind"].(string); kind == "BackupBucketConfig" {
				api, _ := doc["apiVersion"].(string)
				typ, _, _ := strings.Cut(api, ".")
				if _, ok := all.APIs()[typ]; !ok {
					t.Errorf("%s: apiVersion %q of no provider", source, api)
					continue
				}
				out = append(out, place(source, typ, doc))
				continue
			}
			providers, ok := fragmentProviders[name]
			if !ok {
				t.Errorf("%s: neither a BackupBucketConfig nor a provider's fragment; list it in notConfigs if it holds no configuration", source)
				continue
			}
			for _, typ := range providers {
				out = append(out, place(source+" (a fragment)", typ, doc))
			}
		}
	}
	return out
}

// unfenced is a BackupBucketConfig in an indented code block, which documented would not see.
var unfenced = regexp.MustCompile(`(?m)^(    |\t).*kind: BackupBucketConfig`)

// seedPlacements are the placements of a block showing a Seed (spec.extensions; false: it does
// not): each backup-<type> extension's providerConfig is the seed configuration, beside the
// Seed's spec.backup.providerConfig, or the incumbent's empty one where it shows none (the rule
// of place: it is always there).
func seedPlacements(source string, doc map[string]any) ([]placement, bool) {
	spec, _ := doc["spec"].(map[string]any)
	extensions, ok := spec["extensions"].([]any)
	if !ok {
		return nil, false
	}
	backup, _ := spec["backup"].(map[string]any)
	pc, _ := backup["providerConfig"].(map[string]any)
	var out []placement
	for _, e := range extensions {
		ext, _ := e.(map[string]any)
		extType, _ := ext["type"].(string)
		for typ := range all.APIs() {
			if extType != decode.ExtensionType(typ) {
				continue
			}
			sc, _ := ext["providerConfig"].(map[string]any)
			p := placement{source: source, typ: typ, providerConfig: pc, seedConfig: sc}
			if p.providerConfig == nil {
				p.providerConfig = map[string]any{"apiVersion": incumbentAPIVersion(typ), "kind": "BackupBucketConfig"}
				if typ == "local" {
					p.providerConfig["apiVersion"] = ourAPIVersion(typ)
				}
			}
			out = append(out, p)
		}
	}
	return out, true
}

// decodes reports this extension's verdict on a placement: the admission webhook's and the
// controllers' merged decoding.
func decodes(api config.API, p placement, providerConfig, seedConfig []byte) error {
	_, err := decode.WithSeedConfig(api.DecodeBucketConfig, providerConfig, seedConfig, seedConfigAt, p.typ, api.IncumbentFields())
	return err
}

// seedConfigAt is where the seed configuration lives in the Seeds here.
const seedConfigAt = "spec.extensions[0].providerConfig"

// incumbentChecks are the requests the incumbents' running code gets for a Seed going from old
// to new (nil: created), each with its seed configuration in spec.extensions (nil: none): the
// Seed's validation, the BackupBucket's (created by gardener from the Seed, and updated with it)
// and, for gcp, the mutation of an Etcd of the seed.
func incumbentChecks(name, typ string, old, updated, oldSeedConfig, seedConfig json.RawMessage, update bool) []check {
	var cs []check
	switch typ {
	case "aws", "gcp":
		allowed := endpointOverrides(updated)
		for _, obj := range []string{"Seed", "BackupBucket"} {
			c := check{Name: name + " / " + obj, Provider: typ, Object: obj, Old: old, New: updated, HasOld: update, AllowedEndpointOverrideURLs: allowed}
			if obj == "Seed" {
				c.Extensions, c.OldExtensions = seedExtensions(typ, seedConfig), seedExtensions(typ, oldSeedConfig)
			}
			cs = append(cs, c)
		}
		if typ == "gcp" {
			cs = append(cs, check{Name: name + " / Etcd", Provider: typ, Object: "Etcd", New: updated})
		}
	}
	return cs
}

// endpointOverrides are the providerConfig's store.endpointOverride: provider-gcp's admission
// accepts only the URLs its operator allowed (its config's allowedEndpointOverrideURLs), and an
// operator who documents one allows it.
func endpointOverrides(raw json.RawMessage) []string {
	var cfg struct {
		Store *struct {
			EndpointOverride *string `json:"endpointOverride"`
		} `json:"store"`
	}
	if json.Unmarshal(raw, &cfg) != nil || cfg.Store == nil || cfg.Store.EndpointOverride == nil {
		return nil
	}
	return []string{*cfg.Store.EndpointOverride}
}

// TestDocumentedConfigurationsPassTheIncumbents: every documented configuration, placed by the
// rule, is accepted by this extension (and means what the document says: the merged decoding
// equals the document's own) and by the incumbents' running code, on a Seed's creation and on
// an update from the incumbent's own form.
func TestDocumentedConfigurationsPassTheIncumbents(t *testing.T) {
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	placements := documented(t, root)
	var checks []check
	for _, p := range placements {
		api := all.APIs()[p.typ]
		pc, sc := jsonOf(t, p.providerConfig), jsonOf(t, p.seedConfig)
		if err := decodes(api, p, pc, sc); err != nil {
			t.Errorf("%s (%s): this extension refuses it as placed: %v", p.source, p.typ, err)
			continue
		}
		if p.seedConfig != nil {
			// Nothing is lost or changed by the placement.
			whole := map[string]any{}
			for k, v := range p.providerConfig {
				whole[k] = v
			}
			for k, v := range p.seedConfig {
				if k != "apiVersion" && k != "kind" {
					whole[k] = v
				}
			}
			want, err := api.DecodeBucketConfig(jsonOf(t, whole))
			if err != nil {
				t.Errorf("%s (%s): the document itself does not decode: %v", p.source, p.typ, err)
				continue
			}
			got, _ := decode.WithSeedConfig(api.DecodeBucketConfig, pc, sc, seedConfigAt, p.typ, api.IncumbentFields())
			if !reflect.DeepEqual(withoutAPIVersion(t, got), withoutAPIVersion(t, want)) {
				t.Errorf("%s (%s): placed, it decodes to %+v; the document says %+v", p.source, p.typ, got, want)
			}
		}
		checks = append(checks, incumbentChecks(p.source, p.typ, nil, pc, nil, sc, false)...)
		checks = append(checks, incumbentChecks(p.source+", an update", p.typ,
			json.RawMessage(`{"apiVersion":"`+incumbentAPIVersion(p.typ)+`","kind":"BackupBucketConfig"}`), pc, nil, sc, true)...)
	}
	if len(checks) < 20 {
		t.Fatalf("only %d checks of the incumbents from %d placements: the documents were not found", len(checks), len(placements))
	}
	for name, v := range runIncumbents(t, checks) {
		if !v.Allowed {
			t.Errorf("%s: refused by the incumbent: %s", name, v.Message)
		}
	}
}

// withoutAPIVersion is a decoded config as JSON without its apiVersion (the placed one has this
// extension's, the document may have the incumbent's): the settings it holds.
func withoutAPIVersion(t *testing.T, cfg config.ProviderConfig) map[string]any {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "apiVersion")
	return m
}

// TestTheIncumbentsRefuseWhatTheRuleKeepsAway: the reason for the rule, and the proof that the
// incumbents' code runs: this extension's apiVersion or its fields in the providerConfig, and a
// BackupBucket without providerConfig on a GCP seed, are refused.
func TestTheIncumbentsRefuseWhatTheRuleKeepsAway(t *testing.T) {
	var checks []check
	refused := map[string]string{} // check name: a substring of the refusal
	add := func(c check, want string) {
		checks = append(checks, c)
		refused[c.Name] = want
	}
	ours := `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`
	add(check{Name: "aws Seed update, this extension's apiVersion", Provider: "aws", Object: "Seed", New: json.RawMessage(ours), HasOld: true}, `no kind "BackupBucketConfig" is registered for version "aws.backup.extensions.gardener.cloud/v1alpha1"`)
	add(check{Name: "aws Seed update, handBack", Provider: "aws", Object: "Seed", New: json.RawMessage(`{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","handBack":true}`), HasOld: true}, `unknown field "handBack"`)
	add(check{Name: "gcp Seed create, labels", Provider: "gcp", Object: "Seed", New: json.RawMessage(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","labels":{"a":"b"}}`)}, `unknown field "labels"`)
	add(check{Name: "gcp Etcd, this extension's apiVersion", Provider: "gcp", Object: "Etcd", New: json.RawMessage(`{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`)}, "failed to decode backupbucketconfig")
	add(check{Name: "gcp Etcd, no providerConfig", Provider: "gcp", Object: "Etcd"}, "provider config is not set on the backupbucket resource")
	for name, v := range runIncumbents(t, checks) {
		if v.Allowed || !strings.Contains(v.Message, refused[name]) {
			t.Errorf("%s: got allowed=%v %q; want refused with %q", name, v.Allowed, v.Message, refused[name])
		}
	}
}

// TestGCPEndpointOverrideReachesTheEtcd: provider-gcp's store.endpointOverride, kept in the
// providerConfig, is accepted by this extension (StoreEndpointOverride) and still copied into the
// Etcd by provider-gcp's webhook.
func TestGCPEndpointOverrideReachesTheEtcd(t *testing.T) {
	const endpoint = "https://storage.me-central2.rep.googleapis.com"
	pc := json.RawMessage(`{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","store":{"endpointOverride":"` + endpoint + `"}}`)
	cfg, err := all.APIs()["gcp"].DecodeBucketConfig(pc)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.(interface{ StoreEndpointOverride() string }).StoreEndpointOverride(); got != endpoint {
		t.Fatalf("StoreEndpointOverride = %q", got)
	}
	v := runIncumbents(t, []check{{Name: "etcd", Provider: "gcp", Object: "Etcd", New: pc}})["etcd"]
	if !v.Allowed || v.EndpointOverride == nil || *v.EndpointOverride != endpoint {
		t.Fatalf("provider-gcp's ensurer: %+v", v)
	}
}

// stepLine is the first line of a YAML block of docs/migrating.md that shows the Seed at a step.
var stepLine = regexp.MustCompile(`^# step: (\w+), (.+)$`)

// TestMigratingSteps: the Seed of every step of docs/migrating.md (its "# step:" blocks, in order
// per provider), created and then updated from the step before, is accepted by the incumbents'
// running code and by this extension; the steps say what the extension then does.
func TestMigratingSteps(t *testing.T) {
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "migrating.md"))
	if err != nil {
		t.Fatal(err)
	}
	type seed struct {
		Spec struct {
			Extensions []extension `json:"extensions"`
			Backup     struct {
				Provider       string          `json:"provider"`
				ProviderConfig json.RawMessage `json:"providerConfig"`
			} `json:"backup"`
		} `json:"spec"`
	}
	var checks []check
	previous := map[string]json.RawMessage{}
	previousSeedConfig := map[string]json.RawMessage{}
	steps := map[string]int{}
	for _, m := range fenced.FindAllSubmatch(data, -1) {
		block := string(m[1])
		first, _, _ := strings.Cut(block, "\n")
		sm := stepLine.FindStringSubmatch(first)
		if sm == nil {
			t.Errorf("docs/migrating.md: a YAML block that is not a step (%q): every block there must be checked", first)
			continue
		}
		typ, step := sm[1], sm[2]
		var s seed
		if err := yaml.Unmarshal([]byte(block), &s); err != nil {
			t.Errorf("docs/migrating.md, %s %s: %v", typ, step, err)
			continue
		}
		if s.Spec.Backup.Provider != typ {
			t.Errorf("docs/migrating.md, %s %s: spec.backup.provider is %q", typ, step, s.Spec.Backup.Provider)
			continue
		}
		api := all.APIs()[typ]
		var seedConfig json.RawMessage
		for _, e := range s.Spec.Extensions {
			if e.Type != decode.ExtensionType(typ) {
				t.Errorf("docs/migrating.md, %s %s: spec.extensions entry of type %q; want %s", typ, step, e.Type, decode.ExtensionType(typ))
			}
			seedConfig = e.ProviderConfig
		}
		pc := s.Spec.Backup.ProviderConfig
		cfg, err := decode.WithSeedConfig(api.DecodeBucketConfig, pc, seedConfig, seedConfigAt, typ, api.IncumbentFields())
		if err != nil {
			t.Errorf("docs/migrating.md, %s %s: this extension refuses the Seed: %v", typ, step, err)
			continue
		}
		// The hand-back step is the one that says handBack, and only it.
		if want := strings.Contains(step, "handBack"); cfg.HandsBack() != want {
			t.Errorf("docs/migrating.md, %s %s: HandsBack() = %v", typ, step, cfg.HandsBack())
		}
		name := fmt.Sprintf("docs/migrating.md, %s %s", typ, step)
		prev, update := previous[typ]
		checks = append(checks, incumbentChecks(name+" (create)", typ, nil, pc, nil, seedConfig, false)...)
		if update {
			checks = append(checks, incumbentChecks(name+" (update)", typ, prev, pc, previousSeedConfig[typ], seedConfig, true)...)
		}
		previous[typ], previousSeedConfig[typ] = pc, seedConfig
		steps[typ]++
	}
	for _, typ := range []string{"aws", "gcp"} {
		if steps[typ] < 4 {
			t.Errorf("docs/migrating.md shows %d steps for %s; want the Seed before the switch, after it, with this extension's own settings and at the hand-back", steps[typ], typ)
		}
	}
	for name, v := range runIncumbents(t, checks) {
		if !v.Allowed {
			t.Errorf("%s: refused by the incumbent: %s", name, v.Message)
		}
	}
}
