// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gen-examples writes example/<provider>/controller-registration.yaml and extension.yaml
// from the chart (make examples); charts' tests fail when they are stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gardener-extension-backup/gardener-extension-backup/charts"
)

func main() {
	for _, p := range charts.Providers {
		files, err := charts.Examples(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		dir := filepath.Join("example", p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println("wrote", filepath.Join(dir, name))
		}
	}
}
