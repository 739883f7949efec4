// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission

import (
	"context"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// ServerOptions say where the webhook server listens.
type ServerOptions struct {
	Host    string
	Port    int
	CertDir string
}

// Serve runs the webhook server with v until ctx ends.
func Serve(ctx context.Context, v Validator, o ServerOptions) error {
	srv := webhook.NewServer(webhook.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir})
	srv.Register(Path, &webhook.Admission{Handler: v})
	srv.Register("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	if err := srv.Start(ctx); err != nil {
		return fmt.Errorf("webhook server: %w", err)
	}
	return nil
}
