// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command release builds and pushes a release's images and charts (charts.ReleaseCharts: the
// seed's and the admission's two) without a container engine
// (make image, images, chart, push-images, push-chart):
//
//	release images --binaries "aws admission" --platforms linux/amd64,linux/arm64 --out bin/images
//	release chart --out bin/chart
//	release push-images --binaries "aws admission" --out bin/images
//	release push-chart --out bin/chart
//
// --registry and --tag name the release (charts.Release); each defaults to values.yaml's
// image.registry and image.tag.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
	"github.com/gardener-extension-backup/gardener-extension-backup/hack/release/oci"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want a command: images, chart, push-images or push-chart")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	registry := fs.String("registry", "", "registry and path prefix of the images and chart (default: values.yaml's image.registry)")
	tag := fs.String("tag", "", "tag of the images, version of the chart (default: values.yaml's image.tag)")
	binaries := fs.String("binaries", "", "space-separated binaries: provider types and admission (images, push-images)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms of the images (images)")
	out := fs.String("out", "", "directory of the OCI layouts (and of the chart's .tgz)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	r, err := charts.DefaultRelease()
	if err != nil {
		return err
	}
	r = r.With(*registry, *tag)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "images":
		ps, err := oci.ParsePlatforms(*platforms)
		if err != nil {
			return err
		}
		for _, b := range strings.Fields(*binaries) {
			dir := filepath.Join(*out, "gardener-extension-backup-"+b)
			fmt.Printf("building %s (%s) for %s\n", dir, r.Image(b), *platforms)
			if err := oci.WriteImageOf(ctx, oci.CommandPackage(b), ps, dir, r.Tag); err != nil {
				return err
			}
		}
		return nil
	case "push-images":
		for _, b := range strings.Fields(*binaries) {
			dir := filepath.Join(*out, "gardener-extension-backup-"+b)
			fmt.Printf("pushing %s to %s\n", dir, r.Image(b))
			if err := oci.Push(ctx, dir, r.Image(b)); err != nil {
				return err
			}
		}
		return nil
	case "chart":
		for _, c := range charts.ReleaseCharts() {
			tgz, err := oci.WriteChart(c, r, *out)
			if err != nil {
				return fmt.Errorf("chart %s: %w", c.Name, err)
			}
			fmt.Printf("wrote %s and the OCI layout %s (%s)\n", tgz, oci.ChartLayoutOf(*out, c), r.ChartRefOf(c))
		}
		return nil
	case "push-chart":
		for _, c := range charts.ReleaseCharts() {
			fmt.Printf("pushing %s to %s\n", oci.ChartLayoutOf(*out, c), r.ChartRefOf(c))
			if err := oci.Push(ctx, oci.ChartLayoutOf(*out, c), r.ChartRefOf(c)); err != nil {
				return fmt.Errorf("chart %s: %w", c.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown command %q: want images, chart, push-images or push-chart", args[0])
}
