package restoredrill

import (
	"bytes"
	"context"
	"io"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corecontroller "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// SourceFor returns the read-only view of the store an entry's drill reads, with the entry's own
// credentials (its spec.secretRef) and region. It is the one place the drill reaches the store.
type SourceFor func(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (drill.Source, error)

// StoreSource is SourceFor over the provider's objectstore.Store, built as every controller
// builds it (corecontroller.NewStore: the secret read from the API server, never cached).
//
// Until DataPlane.OpenObject lands: objectstore.Store has no streaming read, so OpenObject reads
// the whole object with GetObject into memory first; a drill's memory then grows with its
// largest object. The data plane's OpenObject replaces getObjectSource without touching the
// drill.
func StoreSource(reader client.Reader, p provider.Provider) SourceFor {
	return func(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (drill.Source, error) {
		store, err := corecontroller.NewStore(ctx, reader, p, be.Spec.SecretRef, be.Spec.Region, nil)
		if err != nil {
			return nil, err
		}
		return getObjectSource{store}, nil
	}
}

// MaxInMemoryObject is the largest object StoreSource reads (until DataPlane.OpenObject lands:
// GetObject holds a whole object in the controller's memory). The reconciler reports a chain
// with a larger object, by its listed size, as TooLarge instead of reading it.
const MaxInMemoryObject = 256 << 20

// getObjectSource gives a drill only the store's listing and reads (until DataPlane.OpenObject
// lands).
type getObjectSource struct{ s objectstore.Store }

func (g getObjectSource) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return g.s.ListObjects(ctx, bucket, prefix, fn)
}

func (g getObjectSource) OpenObject(ctx context.Context, bucket, key string) (io.ReadCloser, error) {
	data, err := g.s.GetObject(ctx, bucket, key)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}
