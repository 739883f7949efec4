// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gen-examples writes <out>/<provider>/controller-registration.yaml and extension.yaml
// from the chart, and <out>/admission/extension.yaml from the admission's charts, for a release
// (make examples): --registry and --tag default to values.yaml's
// image block, whose examples are example/ (charts' tests fail when those are stale).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
)

func main() {
	registry := flag.String("registry", "", "registry and path prefix of the images and chart (default: values.yaml's image.registry)")
	tag := flag.String("tag", "", "tag of the images, version of the chart (default: values.yaml's image.tag)")
	out := flag.String("out", "example", "directory of the examples, one directory per provider")
	flag.Parse()
	if err := run(*registry, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(registry, tag, out string) error {
	r, err := charts.DefaultRelease()
	if err != nil {
		return err
	}
	r = r.With(registry, tag)
	examples := map[string]map[string][]byte{}
	for _, p := range charts.Providers {
		if examples[p], err = charts.ExamplesFor(p, r); err != nil {
			return err
		}
	}
	if examples["admission"], err = charts.AdmissionExamplesFor(r); err != nil {
		return err
	}
	for sub, files := range examples {
		dir := filepath.Join(out, sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return err
			}
			fmt.Println("wrote", filepath.Join(dir, name))
		}
	}
	return nil
}
