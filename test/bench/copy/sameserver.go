// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/minio/madmin-go/v3"

	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// copyUser adds a MinIO user to m, as an operator gives the copy its own principal in the
// primary's store: everything on the buckets it writes, and only reading objects of the buckets
// it reads (the grant that lets the engine copy inside the store). Its stores are built from a
// secret of its own.
func copyUser(ctx context.Context, m *awsstack.MinIO, name string, reads, writes []string) (stores, error) {
	admin, err := m.Admin()
	if err != nil {
		return stores{}, err
	}
	secret := name + "-secret-0123456789"
	if err := admin.AddUser(ctx, name, secret); err != nil {
		return stores{}, fmt.Errorf("adding MinIO user %s: %w", name, err)
	}
	var resources []string
	for _, b := range writes {
		resources = append(resources, fmt.Sprintf(`"arn:aws:s3:::%s","arn:aws:s3:::%s/*"`, b, b))
	}
	statements := []string{fmt.Sprintf(`{"Effect":"Allow","Action":["s3:*"],"Resource":[%s]}`, strings.Join(resources, ","))}
	if len(reads) > 0 {
		var objects []string
		for _, b := range reads {
			objects = append(objects, fmt.Sprintf(`"arn:aws:s3:::%s/*"`, b))
		}
		statements = append(statements, fmt.Sprintf(`{"Effect":"Allow","Action":["s3:GetObject","s3:GetObjectVersion"],"Resource":[%s]}`, strings.Join(objects, ",")))
	}
	policy := `{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + `]}`
	if err := admin.AddCannedPolicy(ctx, name, []byte(policy)); err != nil {
		return stores{}, fmt.Errorf("adding MinIO policy %s: %w", name, err)
	}
	if _, err := admin.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{name}, User: name}); err != nil {
		return stores{}, fmt.Errorf("attaching MinIO policy %s: %w", name, err)
	}
	user := *m
	user.AccessKey, user.SecretKey = name, secret
	return newStores(ctx, &user)
}

// printRatios prints, for each set copied within the first server, the server-side copy's rate
// beside the streamed copy's and the server's raw rates (its read of the source, its write).
func printRatios(rows []row) {
	fmt.Printf("\nWithin the first server (one MinIO), side by side:\n\n| snapshots | server-side / streamed | server-side / slower raw | streamed / slower raw |\n|---|---|---|---|\n")
	sets := []string{}
	rate := map[string]map[string]float64{}
	for _, r := range rows {
		if rate[r.set] == nil {
			rate[r.set] = map[string]float64{}
			sets = append(sets, r.set)
		}
		if r.bytes > 0 {
			rate[r.set][r.strategy] = r.mibps()
		}
	}
	for _, set := range sets {
		m := rate[set]
		server, streamed := m["server-side copy within the first server"], m["streamed copy within the first server"]
		raw := min(m["raw read of the source (GET)"], m["raw write of the first server (PUT)"])
		if server == 0 || streamed == 0 || raw == 0 {
			continue
		}
		fmt.Printf("| %s | %.2f | %.0f %% | %.0f %% |\n", set, server/streamed, 100*server/raw, 100*streamed/raw)
	}
}
