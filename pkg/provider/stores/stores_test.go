// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stores_test

import (
	"slices"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/stores"
)

// Every type but local has its copy store, each once.
func TestCopiesAreEveryCloudType(t *testing.T) {
	var got []string
	for _, p := range stores.Copies() {
		got = append(got, p.Type())
	}
	slices.Sort(got)
	want := slices.DeleteFunc(all.Types(), func(t string) bool { return t == "local" })
	if !slices.Equal(got, want) {
		t.Fatalf("copy stores %v; want %v", got, want)
	}
}
