// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-admission validates, in the garden cluster, the backup
// providerConfig of core BackupBuckets and Seeds for every provider, with the providers' SDK-free
// APIs: no cloud SDK is linked into it.
package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

func main() {
	var o admission.ServerOptions
	flag.StringVar(&o.Host, "host", "", "address to listen on (empty: all)")
	flag.IntVar(&o.Port, "port", 9443, "port to listen on")
	flag.StringVar(&o.CertDir, "cert-dir", "/etc/gardener-extension-backup-admission/tls", "directory holding tls.crt and tls.key")
	flag.Parse()
	if err := admission.Serve(signals.SetupSignalHandler(), admission.Validator{APIs: all.APIs()}, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
