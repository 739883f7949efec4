// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// Snapshot kinds as etcd-backup-restore names them.
const (
	kindFull  = snapshotname.KindFull
	kindDelta = snapshotname.KindDelta
)

// name is one snapshot key taken apart, as far as the inventory reads it.
type name struct {
	etcd      string // the store prefix below `<entry>/`, e.g. "etcd-main"
	kind      string // kindFull or kindDelta
	lastRev   int64
	createdOn time.Time
}

// parseName parses rel, a key with `<entry>/` already cut off, with snapshotname.Parse. A
// snapshot whose compression etcd-backup-restore cannot decompress could not be restored and is
// not counted.
func parseName(rel string) (name, bool) {
	n, ok := snapshotname.Parse(rel)
	if !ok || !n.Restorable() {
		return name{}, false
	}
	return name{etcd: n.Etcd, kind: n.Kind, lastRev: n.LastRevision, createdOn: n.CreatedOn}, true
}
