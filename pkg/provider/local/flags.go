// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Flags of the local binary (cmd/gardener-extension-backup-local) beside the common ones.
const (
	FlagRoot     = "local-root"
	FlagHostPath = "local-host-path"
)

// Flags implements provider.Cloud: --local-root (required, an existing absolute directory) and
// --local-host-path (absolute; default --local-root), parsed into p's Root and HostPath.
func (p *Provider) Flags() provider.Flags { return flags{p} }

// flags are the local binary's flags, bound to the Provider's fields.
type flags struct{ p *Provider }

func (f flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.p.Root, FlagRoot, "", "Absolute directory, as this process sees it, in which each BackupBucket is a directory of its name "+
		"(in Gardener's local setup the hostPath volume mounted at provider-local's --backupbucket-local-dir).")
	fs.StringVar(&f.p.HostPath, FlagHostPath, "", "The same directory as the nodes see it: the etcd-backup secret's hostPath, which etcd-druid mounts "+
		"for etcd-backup-restore's Local storage provider (in Gardener's local setup /etc/gardener/local-backupbuckets). Default: --"+FlagRoot+".")
}

func (f flags) Complete() error { return f.p.checkFlags() }

// checkFlags refuses a root that is not an existing absolute directory and a relative host path.
func (p *Provider) checkFlags() error {
	if p.Root == "" || !filepath.IsAbs(p.Root) {
		return fmt.Errorf("--%s must be an absolute directory, got %q", FlagRoot, p.Root)
	}
	if fi, err := os.Stat(p.Root); err != nil || !fi.IsDir() {
		return fmt.Errorf("--%s %q is not an existing directory (is its volume mounted?)", FlagRoot, p.Root)
	}
	if p.HostPath != "" && !filepath.IsAbs(p.HostPath) {
		return fmt.Errorf("--%s must be absolute, got %q", FlagHostPath, p.HostPath)
	}
	return nil
}
