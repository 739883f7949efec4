// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

// diff compares inventories as they are published (JSON, times in seconds) and returns both
// when they differ.
func diff(got, want Inventory) string {
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) == string(w) {
		return ""
	}
	return "got:\n" + string(g) + "\nwant:\n" + string(w)
}
