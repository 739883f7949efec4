// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package oci

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// refNameAnnotation names the one entry of a layout's index.json (its tag).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteIndex replaces dir with an OCI image layout holding idx, tagged tag.
func WriteIndex(dir string, idx v1.ImageIndex, tag string) error {
	p, err := newLayout(dir)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tag}))
}

// WriteImage replaces dir with an OCI image layout holding img, tagged tag.
func WriteImage(dir string, img v1.Image, tag string) error {
	p, err := newLayout(dir)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: tag}))
}

func newLayout(dir string) (layout.Path, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return layout.Write(dir, empty.Index)
}

// Push sends the one artifact of the layout in dir (written by WriteIndex or WriteImage) to ref,
// with the credentials of the docker config (~/.docker/config.json, $DOCKER_CONFIG), as crane
// push does.
func Push(ctx context.Context, dir, ref string, opts ...remote.Option) error {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("reference %q: %w", ref, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("the OCI layout %s holds %d artifacts; want one", dir, len(m.Manifests))
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	d := m.Manifests[0]
	switch {
	case d.MediaType.IsIndex():
		child, err := idx.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		return remote.WriteIndex(r, child, opts...)
	case d.MediaType.IsImage():
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		return remote.Write(r, img, opts...)
	}
	return fmt.Errorf("the OCI layout %s holds a %s; want an image or an index", dir, d.MediaType)
}
