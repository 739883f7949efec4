// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command demo-aws is `make demo PROVIDER=aws` (see package test/demo): it links only aws's
// stand-in and SDK.
package main

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/test/demo"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/aws"
)

func main() { demo.Main() }
