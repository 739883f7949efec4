// Command gardener-extension-backup-admission validates, in the garden cluster, the backup
// providerConfig of core BackupBuckets and Seeds for all four providers.
package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

func main() {
	var o admission.ServerOptions
	flag.StringVar(&o.Host, "host", "", "address to listen on (empty: all)")
	flag.IntVar(&o.Port, "port", 9443, "port to listen on")
	flag.StringVar(&o.CertDir, "cert-dir", "/etc/gardener-extension-backup-admission/tls", "directory holding tls.crt and tls.key")
	flag.Parse()
	v := admission.Validator{Providers: map[string]provider.Provider{}}
	for _, p := range []provider.Provider{&aws.Provider{}, &azure.Provider{}, &gcp.Provider{}, &openstack.Provider{}} {
		v.Providers[p.Type()] = p
	}
	if err := admission.Serve(signals.SetupSignalHandler(), v, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
