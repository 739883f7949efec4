// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package oci builds the extension's release artifacts without a container engine: one OCI
// image per binary (the static Go binary on a base assembled here, the same files as
// distroless/static's nonroot variant needs for this binary) and the Helm chart as an OCI
// artifact, each written as an OCI image layout directory that Push sends to a registry.
package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

const (
	// BinaryPath is where the image holds the binary; it is the image's entrypoint (the restore
	// drill re-executes it as its child, so it needs no other binary).
	BinaryPath = "/gardener-extension-backup"
	// CABundlePath is where Go's crypto/x509 looks for the system roots on Linux.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
	// NonRoot is the uid and gid the image runs as (distroless' nonroot, the chart's runAsUser).
	NonRoot = 65532
)

// CommandPackage is the main package of binary (a provider type or "admission").
func CommandPackage(binary string) string {
	return "github.com/gardener-extension-backup/gardener-extension-backup/cmd/gardener-extension-backup-" + binary
}

// created is every image's and every file's time: the same sources give the same digest.
var created = time.Unix(0, 0).UTC()

// BuildBinary compiles the main package pkg (a go build pattern such as
// ./cmd/gardener-extension-backup-aws) statically (CGO_ENABLED=0) for platform into out.
func BuildBinary(ctx context.Context, pkg string, platform v1.Platform, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	if platform.Variant != "" && platform.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(platform.Variant, "v"))
	}
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for %s: %w\n%s", pkg, platform.String(), err, output)
	}
	return nil
}

// Image is the image of one platform: a base layer (users, name service switch, CA bundle,
// /tmp, the nonroot home) and a layer with binary at BinaryPath, run as NonRoot.
func Image(binary []byte, platform v1.Platform) (v1.Image, error) {
	base, err := baseLayer()
	if err != nil {
		return nil, err
	}
	app, err := layer([]file{{name: BinaryPath, mode: 0o755, data: binary}})
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, app)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Entrypoint = []string{BinaryPath}
	cfg.Config.User = fmt.Sprintf("%d:%d", NonRoot, NonRoot)
	cfg.Config.WorkingDir = "/home/nonroot"
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=" + CABundlePath}
	return mutate.ConfigFile(img, cfg)
}

// Index is a multi-platform image index over images (one per platform, in order).
func Index(images map[string]v1.Image, platforms []v1.Platform) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, ok := images[p.String()]
		if !ok {
			return nil, fmt.Errorf("no image for %s", p.String())
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx, nil
}

// ParsePlatforms parses a comma-separated list such as "linux/amd64,linux/arm64".
func ParsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", f, err)
		}
		if p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q: want os/arch[/variant]", f)
		}
		out = append(out, *p)
	}
	return out, nil
}

type file struct {
	name string // absolute path in the image
	mode int64  // permission bits; 0 with dir for a directory
	dir  bool
	uid  int
	data []byte
}

// passwd and group are distroless' nonroot entries (root, nobody, nonroot).
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n"
	// nsswitch has Go's resolver read /etc/hosts before asking DNS, as glibc does.
	nsswitch = "hosts: files dns\n"
)

func baseLayer() (v1.Layer, error) {
	ca, err := CABundle()
	if err != nil {
		return nil, err
	}
	return layer([]file{
		{name: "/etc", dir: true, mode: 0o755},
		{name: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "/etc/group", mode: 0o644, data: []byte(group)},
		{name: "/etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{name: "/etc/ssl", dir: true, mode: 0o755},
		{name: "/etc/ssl/certs", dir: true, mode: 0o755},
		{name: CABundlePath, mode: 0o644, data: ca},
		{name: "/home", dir: true, mode: 0o755},
		{name: "/home/nonroot", dir: true, mode: 0o700, uid: NonRoot},
		{name: "/tmp", dir: true, mode: 0o1777},
	})
}

// CABundle is the Mozilla root store as Go's golang.org/x/crypto/x509roots/fallback module pins
// it (a version of its own in go.mod, the same on every build machine), in PEM. Roots the store
// trusts only with a constraint (such as a distrust date) are left out: a PEM bundle cannot
// carry the constraint.
func CABundle() ([]byte, error) {
	var buf bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("the x509roots bundle holds no unconstrained root")
	}
	return buf.Bytes(), nil
}

// layer is an uncompressed tar of files (parents before children), gzip-compressed by ggcr.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: strings.TrimPrefix(f.name, "/"), Mode: f.mode, Uid: f.uid, Gid: f.uid,
			ModTime: created, Typeflag: tar.TypeReg, Size: int64(len(f.data)), Format: tar.FormatPAX,
		}
		if f.dir {
			h.Name += "/"
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// BuildImage compiles the main package pkg for each platform in a temporary directory and
// returns the image index over them.
func BuildImage(ctx context.Context, pkg string, platforms []v1.Platform) (v1.ImageIndex, error) {
	tmp, err := os.MkdirTemp("", "image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	images := map[string]v1.Image{}
	for _, p := range platforms {
		out := filepath.Join(tmp, strings.ReplaceAll(p.String(), "/", "-"))
		if err := BuildBinary(ctx, pkg, p, out); err != nil {
			return nil, err
		}
		binary, err := os.ReadFile(out)
		if err != nil {
			return nil, err
		}
		img, err := Image(binary, p)
		if err != nil {
			return nil, fmt.Errorf("image of %s for %s: %w", pkg, p.String(), err)
		}
		images[p.String()] = img
	}
	return Index(images, platforms)
}

// WriteImageOf builds the image of the main package pkg for platforms and writes it to the OCI
// layout dir, tagged tag.
func WriteImageOf(ctx context.Context, pkg string, platforms []v1.Platform, dir, tag string) error {
	idx, err := BuildImage(ctx, pkg, platforms)
	if err != nil {
		return err
	}
	return WriteIndex(dir, idx, tag)
}
