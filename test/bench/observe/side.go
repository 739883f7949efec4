// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	generatedConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"generatedCredentials":{"issuer":"MinIO"}}`
	plainConfig     = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`
)

type bucket struct {
	name      string
	generated bool
}

type entry struct {
	name, bucket string
	objects      int
}

// side is one extension process with its own seed (envtest) and its own proxy in front of the
// shared MinIO, its own buckets (named after the side) and the same entries and objects.
type side struct {
	name, short string
	flags       []string
	observing   bool

	env   *envtest.Environment
	host  string
	k8s   client.WithWatch
	proxy *stack.Proxy
	ext   *stack.Extension
	log   *os.File

	buckets []bucket
	entries []entry

	mu        sync.Mutex
	measuring bool
	reqs      []request // requests in the window
	extBefore benchutil.MetricSet
	extAfter  benchutil.MetricSet
	methods0  map[string]int64 // the proxy's own per-method count at the window's start
	methods1  map[string]int64
	watchStop context.CancelFunc
	watchWG   sync.WaitGroup
	modified  map[string]int // MODIFIED watch events in the window, by kind
}

func (s *side) start(ctx context.Context, c config, work string, minio *awsstack.MinIO) error {
	dir := filepath.Join(work, s.short)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		return err
	}
	s.env, s.host = env, cfg.Host
	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	if s.k8s, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return err
	}
	if s.log, err = os.Create(filepath.Join(dir, "proxy.log")); err != nil {
		return err
	}
	if s.proxy, err = stack.StartProxy(minio.Endpoint, stack.ProxyOptions{OnRequest: s.record}); err != nil {
		return err
	}
	s.ext, err = stack.StartExtension(ctx, env, c.binary, dir, s.flags...)
	return err
}

func (s *side) stop() {
	if s.ext != nil {
		s.ext.Stop()
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.log != nil {
		_ = s.log.Close()
	}
	if s.env != nil {
		_ = s.env.Stop()
	}
}

var operationReconcile = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}

func (s *side) secret(ctx context.Context, name string, data map[string][]byte) (corev1.SecretReference, error) {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: name}, Data: data}
	return corev1.SecretReference{Namespace: "garden", Name: name}, s.k8s.Create(ctx, sec)
}

// secretData reaches MinIO through this side's proxy.
func (s *side) secretData(minio *awsstack.MinIO) map[string][]byte {
	return map[string][]byte{
		"accessKeyID":      []byte(minio.AccessKey),
		"secretAccessKey":  []byte(minio.SecretKey),
		"endpoint":         []byte(s.proxy.URL),
		"s3ForcePathStyle": []byte("true"),
	}
}

func (s *side) createBuckets(ctx context.Context, c config, minio *awsstack.MinIO) error {
	for i := range c.buckets {
		b := bucket{name: fmt.Sprintf("obs-%s-%d", s.short, i), generated: i%2 == 0}
		ref, err := s.secret(ctx, "bucket-"+b.name, s.secretData(minio))
		if err != nil {
			return err
		}
		cfg := plainConfig
		if b.generated {
			cfg = generatedConfig
		}
		bb := &extensionsv1alpha1.BackupBucket{
			ObjectMeta: metav1.ObjectMeta{Name: b.name, Annotations: operationReconcile},
			Spec: extensionsv1alpha1.BackupBucketSpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws", ProviderConfig: &runtime.RawExtension{Raw: []byte(cfg)}},
				Region:      minio.Region,
				SecretRef:   ref,
			},
		}
		if err := s.k8s.Create(ctx, bb); err != nil {
			return err
		}
		s.buckets = append(s.buckets, b)
	}
	return nil
}

func succeeded(obj extensionsv1alpha1.Object) bool {
	op := obj.GetExtensionStatus().GetLastOperation()
	return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded
}

func conditionTrue(conds []gardencorev1beta1.Condition, t gardencorev1beta1.ConditionType) bool {
	c := v1beta1helper.GetCondition(conds, t)
	return c != nil && c.Status == gardencorev1beta1.ConditionTrue
}

// waitAll polls until ready holds for every object of names, printing progress.
func (s *side) waitAll(ctx context.Context, what string, names []string, get func(string) (extensionsv1alpha1.Object, error), ready func(extensionsv1alpha1.Object) bool) error {
	deadline := time.Now().Add(5 * time.Minute)
	lastSay := time.Now()
	for {
		done, blocker := 0, ""
		for _, n := range names {
			obj, err := get(n)
			if err != nil {
				return err
			}
			if ready(obj) {
				done++
			} else if blocker == "" {
				blocker = n
				if le := obj.GetExtensionStatus().GetLastError(); le != nil {
					blocker += ": " + le.Description
				}
			}
		}
		if done == len(names) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d %s not ready after 5 minutes (e.g. %s)", len(names)-done, len(names), what, blocker)
		}
		if time.Since(lastSay) > 10*time.Second {
			progress("%s: %d of %d %s ready", s.name, done, len(names), what)
			lastSay = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *side) waitBuckets(ctx context.Context) error {
	var names []string
	for _, b := range s.buckets {
		names = append(names, b.name)
	}
	return s.waitAll(ctx, "buckets", names, func(n string) (extensionsv1alpha1.Object, error) {
		bb := &extensionsv1alpha1.BackupBucket{}
		return bb, s.k8s.Get(ctx, client.ObjectKey{Name: n}, bb)
	}, func(obj extensionsv1alpha1.Object) bool {
		bb := obj.(*extensionsv1alpha1.BackupBucket)
		if !succeeded(bb) {
			return false
		}
		return !s.observing || conditionTrue(bb.Status.Conditions, backupbucket.ConditionBucketAvailable)
	})
}

func entryName(i int) string {
	return fmt.Sprintf("shoot--bench--s%03d--2b8f0c1e-5d9a-4c1e-9f3b-%012d", i, i)
}

// plan is the entries of c: every other one small, assigned to the buckets in pairs, so that
// every bucket gets both sizes.
func plan(c config, buckets []bucket) []entry {
	var out []entry
	for i := range c.entries {
		n := c.small
		if i%2 == 1 {
			n = c.large
		}
		out = append(out, entry{name: entryName(i), bucket: buckets[(i/2)%len(buckets)].name, objects: n})
	}
	return out
}

func (s *side) createEntries(ctx context.Context, c config, minio *awsstack.MinIO) error {
	// As gardenlet does: an entry's secret holds its bucket's generated credentials if it has
	// them, the operator's otherwise.
	data := map[string]map[string][]byte{}
	for _, b := range s.buckets {
		data[b.name] = s.secretData(minio)
		if !b.generated {
			continue
		}
		bb := &extensionsv1alpha1.BackupBucket{}
		if err := s.k8s.Get(ctx, client.ObjectKey{Name: b.name}, bb); err != nil {
			return err
		}
		ref := bb.Status.GeneratedSecretRef
		if ref == nil {
			return fmt.Errorf("bucket %s has no generated secret", b.name)
		}
		sec := &corev1.Secret{}
		if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
			return err
		}
		data[b.name] = sec.Data
	}
	for _, e := range plan(c, s.buckets) {
		shoot := e.name[:len("shoot--bench--s000")]
		if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shoot}}); err != nil {
			return err
		}
		cluster := &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: shoot}, Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{}`)},
			Seed:         &runtime.RawExtension{Raw: []byte(`{}`)},
			Shoot:        runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","spec":{"hibernation":{"enabled":false}},"status":{"isHibernated":false}}`)},
		}}
		if err := s.k8s.Create(ctx, cluster); err != nil {
			return err
		}
		ref, err := s.secret(ctx, "entry-"+e.name, data[e.bucket])
		if err != nil {
			return err
		}
		be := &extensionsv1alpha1.BackupEntry{
			ObjectMeta: metav1.ObjectMeta{Name: e.name, Annotations: operationReconcile},
			Spec: extensionsv1alpha1.BackupEntrySpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"},
				Region:      minio.Region,
				BucketName:  e.bucket,
				SecretRef:   ref,
			},
		}
		if err := s.k8s.Create(ctx, be); err != nil {
			return err
		}
		s.entries = append(s.entries, e)
	}
	return nil
}

func (s *side) waitEntries(ctx context.Context) error {
	var names []string
	for _, e := range s.entries {
		names = append(names, e.name)
	}
	if err := s.waitAll(ctx, "entries", names, func(n string) (extensionsv1alpha1.Object, error) {
		be := &extensionsv1alpha1.BackupEntry{}
		return be, s.k8s.Get(ctx, client.ObjectKey{Name: n}, be)
	}, func(obj extensionsv1alpha1.Object) bool {
		be := obj.(*extensionsv1alpha1.BackupEntry)
		if !succeeded(be) {
			return false
		}
		return !s.observing || conditionTrue(be.Status.Conditions, entryinventory.ConditionBackupsFresh)
	}); err != nil {
		return err
	}
	return s.waitBuckets(ctx) // still available
}

// begin starts the window: counters, metrics and watches.
func (s *side) begin(ctx context.Context) error {
	var err error
	if s.extBefore, err = benchutil.Scrape(ctx, s.ext.MetricsURL); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	s.watchStop = cancel
	s.modified = map[string]int{}
	for kind, list := range map[string]client.ObjectList{"BackupBucket": &extensionsv1alpha1.BackupBucketList{}, "BackupEntry": &extensionsv1alpha1.BackupEntryList{}} {
		w, err := s.k8s.Watch(wctx, list)
		if err != nil {
			cancel()
			return err
		}
		s.watchWG.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if ev.Type == watch.Modified {
						s.mu.Lock()
						s.modified[kind]++
						s.mu.Unlock()
					}
				}
			}
		})
	}
	s.mu.Lock()
	s.measuring = true
	s.methods0 = s.proxy.Methods()
	s.mu.Unlock()
	return nil
}

// finish ends the window.
func (s *side) finish(ctx context.Context) error {
	s.mu.Lock()
	s.measuring = false
	s.methods1 = s.proxy.Methods()
	s.mu.Unlock()
	s.watchStop()
	s.watchWG.Wait()
	var err error
	s.extAfter, err = benchutil.Scrape(ctx, s.ext.MetricsURL)
	return err
}

// live is the requests and writes counted in the window so far.
func (s *side) live() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := 0
	for _, r := range s.reqs {
		if r.write {
			w++
		}
	}
	return len(s.reqs), w
}
