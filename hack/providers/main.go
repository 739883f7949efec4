// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command providers prints the extension's provider types, one line each, from the one list in
// pkg/provider/all: the Makefile builds and tests what it prints.
package main

import (
	"fmt"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

func main() {
	for _, t := range all.Types() {
		fmt.Println(t)
	}
}
