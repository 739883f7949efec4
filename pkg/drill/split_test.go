package drill

import (
	"context"
	"maps"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The two halves restore what DrillChain restores, and a finding of the fetch stops before any
// restore.
func TestFetchThenRestore(t *testing.T) {
	f := newChain(t, ".gz")
	s := store(t, f.objects)
	ctx := context.Background()
	chains := CheckChains(entry, listing(t, s))
	if len(chains) != 1 || chains[0].Err != nil {
		t.Fatalf("chains %+v", chains)
	}
	dir := t.TempDir()
	read, err := FetchChain(ctx, memSource{s}, bucket, chains[0], dir, Options{})
	if err != nil || read != chains[0].Size() {
		t.Fatalf("fetch: read %d of %d: %v", read, chains[0].Size(), err)
	}
	var restored map[string]string
	r := RestoreFetched(ctx, chains[0], dir, Options{Inspect: func(_ context.Context, _ string, kv clientv3.KV) error {
		restored = readKVs(t, kv)
		return nil
	}})
	if r.Err != nil || r.Revision != f.lastRev || r.Deltas != 3 || !maps.Equal(restored, f.want) {
		t.Fatalf("result %+v, restored %d keys of %d", r, len(restored), len(f.want))
	}

	damaged := maps.Clone(f.objects)
	damaged[f.names[2]] = flip(damaged[f.names[2]], 20)
	s = store(t, damaged)
	dir = t.TempDir()
	if _, err := FetchChain(ctx, memSource{s}, bucket, CheckChains(entry, listing(t, s))[0], dir, Options{}); ReasonOf(err) == "" {
		t.Fatalf("a damaged delta fetched without a finding: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err) // the caller's directory, the caller removes it
	}
}

func TestNewFinding(t *testing.T) {
	if err := NewFinding(ReasonChainBroken, "k", "gap"); ReasonOf(err) != ReasonChainBroken || err.Error() != "ChainBroken: k: gap" {
		t.Errorf("%v", err)
	}
	if err := NewFinding("Other", "", "x"); err != nil {
		t.Errorf("%v", err)
	}
}
