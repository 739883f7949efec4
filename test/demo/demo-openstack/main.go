// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command demo-openstack is `make demo PROVIDER=openstack` (see package test/demo): it links only openstack's
// stand-in and SDK.
package main

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/test/demo"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/openstack"
)

func main() { demo.Main() }
