package aws_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// issuer is the bucket controller's view of a MinIO store with generated credentials.
func issuer(t *testing.T) (objectstore.Store, objectstore.CredentialIssuer) {
	t.Helper()
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	s, err := (&awsprovider.Provider{}).NewStore(context.Background(), provider.Credentials{Data: minio.SecretData(), Region: "eu-central-1", BucketConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	i, ok := s.(objectstore.CredentialIssuer)
	if !ok {
		t.Fatal("a store configured with generatedCredentials issues no credentials")
	}
	return s, i
}

func bucketWith(t *testing.T, s objectstore.Store) string {
	t.Helper()
	name := newBucketName()
	if err := s.EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "eu-central-1", Config: minioConfig()}); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestGeneratedCredentialReachesOnlyItsBucket(t *testing.T) {
	ctx := context.Background()
	s, iss := issuer(t)
	mine, other := bucketWith(t, s), bucketWith(t, s)
	if err := s.PutObject(ctx, other, "shoot--x--y--1/keep", []byte("other")); err != nil {
		t.Fatal(err)
	}
	cred, err := iss.IssueCredential(ctx, mine, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(cred.Data["accessKeyID"]) == minio.AccessKey || string(cred.Data["secretAccessKey"]) == minio.SecretKey || string(cred.Data["endpoint"]) != minio.Endpoint {
		t.Fatal("the generated credential is the operator's or lost the endpoint")
	}
	scoped := newStore(t, cred.Data)
	// What etcd-backup-restore and the entry controller do, in the bucket: write, read, list, delete.
	if err := scoped.PutObject(ctx, mine, "shoot--a--b--1/etcd-main/v2/Full-1", []byte("snapshot")); err != nil {
		t.Fatalf("put in its bucket: %v", err)
	}
	if got, err := scoped.GetObject(ctx, mine, "shoot--a--b--1/etcd-main/v2/Full-1"); err != nil || string(got) != "snapshot" {
		t.Fatalf("get in its bucket: %q, %v", got, err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	if res, err := objectstore.DeletePrefix(ctx, scoped, mine, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Deleted == 0 {
		t.Fatalf("deleting its entry: %+v, %v", res, err)
	}
	// Another bucket: refused, whatever the operation.
	for name, op := range map[string]func() error{
		"put": func() error { return scoped.PutObject(ctx, other, "shoot--a--b--1/x", []byte("x")) },
		"get": func() error { _, err := scoped.GetObject(ctx, other, "shoot--x--y--1/keep"); return err },
		"list": func() error {
			return scoped.ListObjects(ctx, other, "", func([]objectstore.ObjectVersion) error { return nil })
		},
		"delete": func() error { return scoped.DeleteBucket(ctx, other) },
	} {
		if err := op(); !errors.Is(err, objectstore.ErrForbidden) {
			t.Errorf("%s in another bucket: %v; want ErrForbidden", name, err)
		}
	}
	// The other bucket's own credential survives the revocation of this bucket's.
	otherCred, err := iss.IssueCredential(ctx, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := iss.RevokeCredentials(ctx, mine, nil); err != nil {
		t.Fatal(err)
	}
	if err := scoped.PutObject(ctx, mine, "shoot--a--b--1/after", []byte("x")); err == nil {
		t.Fatal("a revoked credential still writes")
	}
	if err := newStore(t, otherCred.Data).PutObject(ctx, other, "shoot--x--y--1/after", []byte("x")); err != nil {
		t.Fatalf("revoking one bucket's credentials broke another bucket's: %v", err)
	}
	if err := iss.RevokeCredentials(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRotationNeverInterruptsAWriter(t *testing.T) {
	ctx := context.Background()
	s, iss := issuer(t)
	bucket := bucketWith(t, s)
	first, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The writer uses whatever credential is published, as etcd-backup-restore reading its
	// mounted secret does; it writes until told to stop.
	var published atomic.Pointer[objectstore.Credential]
	published.Store(&first)
	var failures, writes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w := newStore(t, published.Load().Data)
			if err := w.PutObject(ctx, bucket, fmt.Sprintf("shoot--w--1/obj-%d", i), []byte("x")); err != nil {
				failures.Add(1)
				t.Logf("write %d failed: %v", i, err)
			}
			writes.Add(1)
		}
	})
	// Each phase lasts until the writer has written a few more objects, however slow the machine.
	more := func(n int64) {
		target := writes.Load() + n
		for deadline := time.Now().Add(time.Minute); writes.Load() < target && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	more(5)
	// Publish the new credential, keep both valid for a while (the grace period), revoke the old.
	second, err := iss.IssueCredential(ctx, bucket, []string{first.ID})
	if err != nil {
		t.Fatal(err)
	}
	published.Store(&second)
	more(5)
	if err := iss.RevokeCredentials(ctx, bucket, []string{second.ID}); err != nil {
		t.Fatal(err)
	}
	more(5)
	close(stop)
	wg.Wait()
	if failures.Load() != 0 || writes.Load() < 15 {
		t.Fatalf("%d of %d writes failed through the rotation; want none", failures.Load(), writes.Load())
	}
	if err := newStore(t, first.Data).PutObject(ctx, bucket, "shoot--w--1/late", []byte("x")); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatal("the revoked credential still writes")
	}
}

func TestGeneratedCredentialsNeedAnEndpointAndKeys(t *testing.T) {
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	data := minio.SecretData()
	delete(data, "endpoint")
	_, err := (&awsprovider.Provider{}).NewStore(context.Background(), provider.Credentials{Data: data, Region: "eu-central-1", BucketConfig: cfg})
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"endpoint"`) {
		t.Fatalf("got %v; want ErrInvalidConfig naming the endpoint key", err)
	}
}
