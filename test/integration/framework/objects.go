package framework

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// FillEntry writes n snapshot objects under prefix ("<entry>/") and three neighbours whose names
// extend the entry's name ("<entry>0/...", "<entry>x/..."), and returns the neighbours: a
// deletion of the entry must leave exactly them.
func FillEntry(t *testing.T, store objectstore.Writer, bucket, prefix string, n int) []string {
	t.Helper()
	keys := make([]string, 0, n+3)
	for i := range n {
		keys = append(keys, fmt.Sprintf("%setcd-main/v2/Full-%06d", prefix, i))
	}
	base := strings.TrimSuffix(prefix, "/")
	neighbours := []string{base + "0/etcd-main/v2/Full-000000", base + "0/etcd-main/v2/Incr-000001", base + "x/etcd-main/v2/Full-000000"}
	if err := conformance.PutMany(Ctx(t), store, bucket, append(keys, neighbours...)); err != nil {
		t.Fatal(err)
	}
	return neighbours
}

// AssertOnly fails unless the bucket holds exactly the keys want.
func AssertOnly(t *testing.T, store objectstore.DataPlane, bucket string, want []string) {
	t.Helper()
	left, err := conformance.ListKeys(Ctx(t), store, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		if len(left) > 10 {
			left = append(left[:10], fmt.Sprintf("... (%d in all)", len(left)))
		}
		t.Fatalf("bucket holds %v; want exactly %v", left, want)
	}
}
