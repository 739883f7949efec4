// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"testing"
	"time"
)

func TestNextDue(t *testing.T) {
	issued := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return issued.Add(d).Format(time.RFC3339) }
	cases := []struct {
		name        string
		annotations map[string]string
		period      time.Duration
		want        time.Time
		ok          bool
	}{
		{name: "nothing generated", annotations: nil, period: time.Hour},
		{name: "no period: rotation only on request", annotations: map[string]string{annotationIssuedAt: at(0)}},
		{name: "rotation by period", annotations: map[string]string{annotationIssuedAt: at(0)}, period: 720 * time.Hour, want: issued.Add(720 * time.Hour), ok: true},
		{name: "previous in grace: its revocation first, the rotation waits for it", annotations: map[string]string{annotationIssuedAt: at(0), annotationRevokePrevious: at(time.Hour)}, period: 30 * time.Minute, want: issued.Add(time.Hour), ok: true},
		{name: "retiring: the retirement, never the rotation", annotations: map[string]string{annotationIssuedAt: at(0), AnnotationRetireAfter: at(2 * time.Hour)}, period: time.Minute, want: issued.Add(2 * time.Hour), ok: true},
		{name: "retiring with a previous credential: its revocation (a switch-on waits for it) or the retirement", annotations: map[string]string{annotationIssuedAt: at(0), annotationRevokePrevious: at(time.Hour), AnnotationRetireAfter: at(2 * time.Hour)}, period: time.Minute, want: issued.Add(time.Hour), ok: true},
		{name: "unparsable revocation time: at once", annotations: map[string]string{annotationIssuedAt: at(0), annotationRevokePrevious: "soon"}, want: time.Time{}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := nextDue(c.annotations, c.period)
			if ok != c.ok || !got.Equal(c.want) {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
