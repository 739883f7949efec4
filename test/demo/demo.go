// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package demo is `make demo`: it runs a real extension binary as a process against a local seed
// (a real kube-apiserver and etcd) and the provider's stand-in of test/standin (MinIO, Azurite,
// fake-gcs-server behind the GCS front, Swift and Keystone, a directory), applies the manifests
// of example/<provider>, and prints an
// account of what happened: the bucket and its settings, the shoot's etcd-backup secret, snapshots
// of a real etcd taken by the real etcd-backup-restore with that secret and restored from the
// bucket, the extension's own restore drill of them (BackupsRestorable), the deletion of the
// shoot's prefix (its neighbour surviving), and the bucket's deletion. The commands are
// test/demo/demo-<type>, one per provider: each imports only its provider's stand-in
// (test/standin/<type>), so that `make demo PROVIDER=<type>` compiles only that provider's SDK
// and stand-in.
package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

var step = 0

func say(format string, args ...any) {
	step++
	fmt.Printf("\n\033[1m[%d] %s\033[0m\n", step, fmt.Sprintf(format, args...))
}

func detail(format string, args ...any) { fmt.Printf("    %s\n", fmt.Sprintf(format, args...)) }

// Main runs the demo of the one stand-in the command registers (test/demo/demo-<type> imports
// test/standin/<type>) and exits with its verdict.
func Main() {
	standIns := standin.All()
	if len(standIns) != 1 {
		fmt.Fprintf(os.Stderr, "a demo command registers exactly one stand-in, this one has %d\n", len(standIns))
		os.Exit(2)
	}
	standIn := standIns[0]
	binary := flag.String("binary", "bin/gardener-extension-backup-"+standIn.Type, "the extension binary to run")
	writes := flag.Int("writes", 3, "keys written into the shoot's etcd, each waited for until a snapshot of etcd-backup-restore holds it")
	flag.Parse()
	if err := run(standIn, *binary, *writes); err != nil {
		fmt.Printf("\n\033[31mDEMO FAILED: %v\033[0m\n", err)
		os.Exit(1)
	}
	fmt.Printf("\n\033[32mDEMO PASSED\033[0m\n")
}

func run(standIn standin.StandIn, binary string, writes int) (err error) {
	providerType := standIn.Type
	defer func() { // a stack helper's Fatal (see runner) ends the demo with its message
		if p := recover(); p != nil {
			f, ok := p.(fatal)
			if !ok {
				panic(p)
			}
			err = errors.New(f.msg)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".tmp", "demo")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}

	say("Starting a local seed: kube-apiserver + etcd with gardener's BackupBucket/BackupEntry CRDs")
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	detail("API server %s", cfg.Host)

	bucketSecret, bb, entrySecret, be := &corev1.Secret{}, &extensionsv1alpha1.BackupBucket{}, &corev1.Secret{}, &extensionsv1alpha1.BackupEntry{}
	for file, obj := range map[string]any{"secret-backupbucket.yaml": bucketSecret, "backupbucket.yaml": bb, "secret-backupentry.yaml": entrySecret, "backupentry.yaml": be} {
		data, err := os.ReadFile(filepath.Join(root, "example", providerType, file))
		if err != nil {
			return err
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			return fmt.Errorf("example/%s/%s: %w", providerType, file, err)
		}
	}

	// The stack's helpers stop what they start when the runner's cleanups run (the demo's end).
	r := &runner{dir: filepath.Join(work, "etcd")}
	defer r.cleanup()
	world, err := standIn.Start(ctx, r, bb.Spec.Region)
	if err != nil {
		return err
	}
	say("Started a local object store: %s", world.What)
	defer world.Stop()
	detail("%s", world.Where)
	store, err := world.Cloud.Stores(ctx, provider.Credentials{Data: world.Operator, Region: bb.Spec.Region})
	if err != nil {
		return err
	}

	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return err
	}

	say("Starting the extension binary %s as a process", binary)
	drilling, err := drillFlags(filepath.Join(work, "drill"))
	if err != nil {
		return err
	}
	ext, err := stack.StartExtension(ctx, env, binary, work,
		append(append([]string{"--bucket-probe-interval", "2s", "--entry-inventory-interval", "2s"}, drilling...), world.Flags...)...)
	if err != nil {
		return err
	}
	defer ext.Stop()
	detail("ready: %s/readyz, metrics on %s, log in %s", ext.HealthURL, ext.MetricsURL, rel(root, ext.LogPath))

	say("Applying example/%s: the bucket's secret and BackupBucket (credentials pointed at the local store)", providerType)
	bucketSecret.StringData, bucketSecret.Data = nil, world.Operator
	entrySecret.StringData, entrySecret.Data = nil, world.Operator
	if world.ProviderConfig != "" {
		bb.Spec.ProviderConfig.Raw = []byte(world.ProviderConfig)
	}
	if err := k8s.Create(ctx, bucketSecret); err != nil {
		return err
	}
	if err := k8s.Create(ctx, bb); err != nil {
		return err
	}
	if err := waitSucceeded(ctx, k8s, bb); err != nil {
		return err
	}
	detail("BackupBucket %s: %s", bb.Name, bb.Status.LastOperation.Description)
	settings, err := world.Describe(ctx, bb.Name)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", bb.Name, err)
	}
	detail("bucket %s exists: %s", bb.Name, settings)

	say("Applying example/%s: the entry's secret and BackupEntry for shoot namespace", providerType)
	shootNS := strings.TrimSuffix(be.Name, "--"+be.Name[strings.LastIndex(be.Name, "--")+2:])
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shootNS}}); err != nil {
		return err
	}
	if err := k8s.Create(ctx, entrySecret); err != nil {
		return err
	}
	if err := k8s.Create(ctx, be); err != nil {
		return err
	}
	if err := waitSucceeded(ctx, k8s, be); err != nil {
		return err
	}
	etcdBackup := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: shootNS, Name: "etcd-backup"}, etcdBackup); err != nil {
		return err
	}
	var keys []string
	for k := range etcdBackup.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	detail("secret %s/etcd-backup written with keys %v (values not shown)", shootNS, keys)
	detail("annotation backup.gardener.cloud/created-by=%s", etcdBackup.Annotations["backup.gardener.cloud/created-by"])

	say("Running the shoot's etcd with the real etcd-backup-restore beside it, the etcd-backup secret mounted as etcd-druid mounts it")
	consumer := world.Consumer
	shoot, err := backUp(ctx, r, store, consumer, etcdBackup.Data, bb.Name, be.Name, writes)
	if err != nil {
		return err
	}
	detail("%d keys written, each covered by a snapshot; etcd-backup-restore took %d snapshots in bucket %s:", len(shoot.keys), len(shoot.snapshots), bb.Name)
	for _, k := range shoot.snapshots {
		detail("  %s", k)
	}

	say("Restoring the shoot's etcd from bucket %s with etcdbrctl restore", bb.Name)
	if err := restore(r, consumer, etcdBackup.Data, bb.Name, be.Name, shoot); err != nil {
		return err
	}

	if err := showDrill(ctx, k8s, be, shoot.snapshots); err != nil {
		return err
	}

	neighbour := be.Name + "0/etcd-main/v2/Full-00000000-00000001-1"
	if err := store.PutObject(ctx, bb.Name, neighbour, []byte("another shoot's snapshot")); err != nil {
		return err
	}
	detail("a neighbour object %s written beside the shoot's prefix (its deletion must not touch it)", neighbour)

	if err := report(ctx, k8s, ext.MetricsURL, bb, be, shoot.objects); err != nil {
		return err
	}

	say("Deleting the BackupEntry: only %s/ may go", be.Name)
	start := time.Now()
	if err := k8s.Delete(ctx, be); err != nil {
		return err
	}
	if err := waitGone(ctx, k8s, be); err != nil {
		return err
	}
	left, err := conformance.ListKeys(ctx, store, bb.Name, "")
	if err != nil {
		return err
	}
	if !slices.Equal(left, []string{neighbour}) {
		return fmt.Errorf("after the entry's deletion the bucket holds %d objects, want only the neighbour", len(left))
	}
	detail("%d snapshots deleted in %s; the neighbour %s survived", len(shoot.snapshots), time.Since(start).Round(time.Millisecond), neighbour)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(etcdBackup), etcdBackup); !apierrors.IsNotFound(err) {
		return fmt.Errorf("the etcd-backup secret survived the entry: %v", err)
	}
	detail("secret %s/etcd-backup deleted", shootNS)

	say("Deleting the BackupBucket: emptied, then deleted")
	if err := k8s.Delete(ctx, bb); err != nil {
		return err
	}
	if err := waitGone(ctx, k8s, bb); err != nil {
		return err
	}
	if _, err := world.Describe(ctx, bb.Name); err == nil {
		return fmt.Errorf("bucket %s survived its BackupBucket", bb.Name)
	}
	detail("bucket %s is gone from the object store", bb.Name)

	say("Metrics endpoint")
	body, err := stack.Get(ctx, ext.MetricsURL)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") {
			detail("%s", line)
		}
	}
	return nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func waitSucceeded(ctx context.Context, k8s client.Client, obj extensionsv1alpha1.Object) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		st := obj.GetExtensionStatus()
		if op := st.GetLastOperation(); op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded {
			return nil
		}
		if time.Now().After(deadline) {
			desc := "no status yet"
			if le := st.GetLastError(); le != nil {
				desc = fmt.Sprintf("%s (codes %v)", le.Description, le.Codes)
			}
			return fmt.Errorf("%s did not succeed: %s", obj.GetName(), desc)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitGone(ctx context.Context, k8s client.Client, obj extensionsv1alpha1.Object) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New(obj.GetName() + " was not deleted in time")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
