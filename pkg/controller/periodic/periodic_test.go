// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package periodic_test

import (
	"fmt"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

// interval is the inventory's default interval, as the test had it in pkg/controller/backupentry.
const interval = 30 * time.Minute

// TestFirstCountsAreSpreadOverTheInterval: entries created at one instant are first counted at
// their own slots, evenly over the interval, and an entry's slot does not move with a later anchor
// (a restart) before the slot comes.
func TestFirstCountsAreSpreadOverTheInterval(t *testing.T) {
	const entries, tenths = 1000, 10
	now := time.Date(2026, 11, 23, 12, 7, 0, 0, time.UTC)
	perTenth := make([]int, tenths)
	for i := range entries {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("shoot--p--s%d--uid", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
		first := periodic.FirstSlot(be, interval, now)
		if first.Before(now) || !first.Before(now.Add(interval)) {
			t.Fatalf("%s: first count at %s, not within [%s, %s)", be.Name, first, now, now.Add(interval))
		}
		if again := periodic.FirstSlot(be, interval, now.Add(first.Sub(now)/2)); !again.Equal(first) {
			t.Fatalf("%s: slot moved from %s to %s with a restart before it", be.Name, first, again)
		}
		perTenth[int(first.Sub(now)*tenths/interval)]++
	}
	// Uniform: 100 per tenth expected; a burst would put most into one.
	for i, n := range perTenth {
		if n < entries/tenths/2 || n > entries/tenths*2 {
			t.Fatalf("first counts per tenth of the interval %v: tenth %d has %d, not spread", perTenth, i, n)
		}
	}
}
