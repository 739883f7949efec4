// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command openstack measures the deletion of one BackupEntry's prefix on real Swift (Debian's
// packages, bulk delete limited to Swift's default 10,000 per request), in one run, each at
// several added network delays:
//
//   - engine:   this project's deletion engine: streamed listing, bulk deletes chunked to the
//     cluster's advertised limit, every per-object result checked;
//   - baseline: today's extension: one bulk delete of every name at once (it breaks above the
//     cluster's per-request limit).
//
// Objects are written with Swift's own bulk upload (extract-archive), untimed.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
)

const (
	container = "bench"
	entry     = "shoot--bench--entry--1"
	neighbour = "shoot--bench--entry--10/etcd-main/v2/Full-0"
)

func main() {
	n := flag.Int("objects", 20_000, "objects under the entry's prefix (Swift's default limit is 10,000 per bulk delete)")
	delaysFlag := flag.String("delays", "0ms,50ms", "added delay per request, comma-separated")
	parallelism := flag.Int("parallelism", 8, "requests in flight for the engine")
	flag.Parse()
	delays, err := stack.ParseDelays(*delaysFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--delays:", err)
		os.Exit(2)
	}
	if err := run(*n, delays, *parallelism); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

type row struct {
	delay             time.Duration
	strategy, outcome string
	deleted           int
	seconds           float64
}

func run(n int, delays []time.Duration, parallelism int) error {
	ctx := context.Background()
	fmt.Printf("bench (openstack): deleting %d objects under %s/ on Swift, delays %v\n", n, entry, delays)
	cloud, err := openstackstack.StartOpenStack(0)
	if err != nil {
		return err
	}
	defer cloud.Stop()
	creds := provider.Credentials{Data: cloud.SecretData("demo"), Region: "RegionOne"}
	direct, err := conformance.NewStores(ctx, &osprovider.Provider{}, creds, &osapi.BackupBucketConfig{})
	if err != nil {
		return err
	}
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: container, Region: "RegionOne"}); err != nil {
		return err
	}
	prefix, _ := objectstore.EntryPrefix(entry)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%setcd-main/v2/Full-%08d", prefix.String(), i)
	}
	archive, err := tarOf(append(keys, neighbour))
	if err != nil {
		return err
	}
	var rows []row
	for _, delay := range delays {
		proxy, err := stack.StartProxy(cloud.SwiftURL, stack.ProxyOptions{Delay: delay})
		if err != nil {
			return err
		}
		rewrite := func(u string) string { return strings.Replace(u, cloud.SwiftURL, proxy.URL, 1) }
		for _, strategy := range []string{"baseline", "engine"} {
			fmt.Printf("  delay %-5s %-8s:", delay, strategy)
			present, err := conformance.ListKeys(ctx, direct, container, prefix.String())
			if err != nil {
				return err
			}
			if len(present) != n { // a failed baseline deletes nothing: its objects serve the engine
				start := time.Now()
				fmt.Printf(" writing %d objects ...", n)
				if err := upload(ctx, cloud, archive, n+1); err != nil {
					return err
				}
				fmt.Printf(" (%s)", time.Since(start).Round(time.Second))
			}
			fmt.Printf(" deleting ...")
			start := time.Now()
			var outcome string
			switch strategy {
			case "baseline":
				outcome = baseline(ctx, cloud, rewrite, keys)
			case "engine":
				store, err := (&osprovider.Provider{EndpointRewrite: rewrite}).NewDataPlane(ctx, creds)
				if err != nil {
					return err
				}
				res, err := objectstore.DeletePrefix(ctx, store, container, prefix, objectstore.DeleteOptions{Parallelism: parallelism})
				outcome = fmt.Sprintf("ok, %d bulk requests of at most %d names", (res.Deleted+store.MaxDeleteBatch()-1)/store.MaxDeleteBatch(), store.MaxDeleteBatch())
				if err != nil || !res.Done {
					outcome = fmt.Sprintf("failed: %v", err)
				}
			}
			secs := time.Since(start).Seconds()
			left, err := conformance.ListKeys(ctx, direct, container, prefix.String())
			if err != nil {
				return err
			}
			if nb, err := conformance.ListKeys(ctx, direct, container, neighbour); err != nil || len(nb) != 1 {
				return fmt.Errorf("%s touched the neighbour", strategy)
			}
			r := row{delay: delay, strategy: strategy, outcome: outcome, deleted: n - len(left), seconds: secs}
			fmt.Printf(" %s; %d deleted in %.1f s\n", outcome, r.deleted, secs)
			rows = append(rows, r)
		}
		proxy.Close()
	}
	fmt.Printf("\n| added delay | strategy | outcome | deleted | seconds | objects/s |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		rate := "-"
		if r.deleted == n {
			rate = fmt.Sprintf("%.0f", float64(n)/r.seconds)
		}
		fmt.Printf("| %s | %s | %s | %d of %d | %.1f | %s |\n", r.delay, r.strategy, r.outcome, r.deleted, n, r.seconds, rate)
	}
	return nil
}

// swiftClient authenticates as the demo user and returns the object-store client.
func swiftClient(ctx context.Context, cloud *openstackstack.OpenStack) (*gophercloud.ServiceClient, error) {
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		Username: "demo", Password: "demopass", DomainName: "Default", TenantName: "demo"})
	if err != nil {
		return nil, err
	}
	return gopenstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: "RegionOne"})
}

// baseline is today's extension: one bulk delete of every name, whatever the cluster's limit.
func baseline(ctx context.Context, cloud *openstackstack.OpenStack, rewrite func(string) string, keys []string) string {
	c, err := swiftClient(ctx, cloud)
	if err != nil {
		return "failed: " + err.Error()
	}
	c.Endpoint = rewrite(c.Endpoint)
	resp, err := objects.BulkDelete(ctx, c, container, keys).Extract()
	if err != nil {
		return "failed: " + strings.SplitN(err.Error(), "\n", 2)[0]
	}
	if !strings.HasPrefix(resp.ResponseStatus, "2") {
		return fmt.Sprintf("failed: %s (%s)", resp.ResponseStatus, resp.ResponseBody)
	}
	return "ok"
}

func tarOf(names []string) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, name := range names {
		body := []byte("snapshot")
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), w.Close()
}

// upload writes the archive's files into the container with Swift's extract-archive.
func upload(ctx context.Context, cloud *openstackstack.OpenStack, archive []byte, want int) error {
	c, err := swiftClient(ctx, cloud)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.Endpoint+container+"?extract-archive=tar", bytes.NewReader(archive))
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", c.TokenID)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Created int        `json:"Number Files Created"`
		Status  string     `json:"Response Status"`
		Errors  [][]string `json:"Errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("extract-archive: %s: %w", resp.Status, err)
	}
	if out.Created != want {
		return fmt.Errorf("extract-archive created %d of %d objects: %s %v", out.Created, want, out.Status, out.Errors)
	}
	return nil
}
