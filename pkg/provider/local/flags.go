// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// Flags of the local binary (cmd/gardener-extension-backup-local) beside the common ones.
const (
	FlagRoot     = "local-root"
	FlagHostPath = "local-host-path"
)

// BindFlags adds the local provider's flags to cmd and, before it runs, checks them and sets
// them on p: --local-root (required, an existing absolute directory) and --local-host-path
// (absolute; default --local-root).
func BindFlags(cmd *cobra.Command, p *Provider) {
	cmd.Flags().StringVar(&p.Root, FlagRoot, "", "Absolute directory, as this process sees it, in which each BackupBucket is a directory of its name "+
		"(in Gardener's local setup the hostPath volume mounted at provider-local's --backupbucket-local-dir).")
	cmd.Flags().StringVar(&p.HostPath, FlagHostPath, "", "The same directory as the nodes see it: the etcd-backup secret's hostPath, which etcd-druid mounts "+
		"for etcd-backup-restore's Local storage provider (in Gardener's local setup /etc/gardener/local-backupbuckets). Default: --"+FlagRoot+".")
	previous := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := p.checkFlags(); err != nil {
			return err
		}
		if previous != nil {
			return previous(c, args)
		}
		return nil
	}
}

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
