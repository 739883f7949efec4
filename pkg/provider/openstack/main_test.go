package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// maxDeletes is the bulk-delete limit the test cluster advertises: small, so that the suite's
// deletions need many bulk requests.
const maxDeletes = 80

// cloud is real Keystone + Swift shared by the tests of this package.
var cloud *stack.OpenStack

func TestMain(m *testing.M) {
	var err error
	cloud, err = stack.StartOpenStack(maxDeletes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting Keystone and Swift:", err)
		os.Exit(1)
	}
	code := m.Run()
	cloud.Stop()
	os.Exit(code)
}

var seq atomic.Int64

func newContainerName() string {
	return fmt.Sprintf("geb-test-%d-%d", time.Now().UnixNano()%1_000_000, seq.Add(1))
}

// testProvider lists in small pages, so that the suite crosses page boundaries cheaply.
var testProvider = &osprovider.Provider{ListPageSize: 250}

func newStore(t testing.TB, data map[string][]byte) objectstore.Store {
	t.Helper()
	s, err := testProvider.NewStore(context.Background(), provider.Credentials{Data: data, Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func with(data map[string][]byte, kv ...string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range data {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = []byte(kv[i+1])
	}
	return out
}

func errorsIsUnauthenticated(err error) bool { return errors.Is(err, objectstore.ErrUnauthenticated) }
