// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Azurite's well-known development account (published in Azurite's documentation).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// A second account, with two keys, stands for the storage accounts the management-plane stand-in
// (ARM) creates: Azurite cannot create accounts or regenerate keys, so the stand-in reports this
// account's endpoint and hands out these two values (see ARM).
var (
	StandInAccount = "gebstandin"
	StandInKeys    = [2]string{"BNh1vBu3RSNZ0buQVAXXlns7NsffiXOlQTwztITy0kxN31kXAjEFNmhvAfwL+bYbtS0SUDBWhl1wTJVBNROmFw==", "oA6FokLShpPk7YiNOhb6xyeZ+m294F9/8lirrtiEggG5D0BRwfLPwSCBVIwhDToyrY4x0XA7C1TjEJQSmoSbBg=="}
)

// Azurite is a running Azurite blob service (npm, installed once by hack/tools.sh).
type Azurite struct {
	// Host is host:port of the blob service; the account's URL is http://<Host>/devstoreaccount1.
	Host string
	cmd  *exec.Cmd
	dir  string
}

// StartAzurite starts Azurite's blob service on a free loopback port with its state on tmpfs.
// --skipApiVersionCheck: the azblob SDK sends a newer API version than Azurite knows.
func StartAzurite() (*Azurite, error) {
	bin, err := stack.Tool("azurite", "AZURITE_BLOB")
	if err != nil {
		return nil, err
	}
	port, err := stack.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(stack.Tmpfs(), "azurite-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port), "--location", dir, "--skipApiVersionCheck", "--silent")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Naming accounts replaces the default one: name it too.
	cmd.Env = append(os.Environ(), fmt.Sprintf("AZURITE_ACCOUNTS=%s:%s;%s:%s:%s", AzuriteAccount, AzuriteKey, StandInAccount, StandInKeys[0], StandInKeys[1]))
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting Azurite: %w", err)
	}
	a := &Azurite{Host: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, dir: dir}
	// Node starts Azurite in a few seconds on an idle machine, in more than 30 on a loaded one.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", a.Host, time.Second); err == nil {
			c.Close()
			return a, nil
		}
		if time.Now().After(deadline) {
			a.Stop()
			return nil, fmt.Errorf("Azurite did not listen on %s within 2 minutes", a.Host)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SecretData is an account-key secret for Azurite, as an operator with an existing account
// (here the emulator) writes it.
func (a *Azurite) SecretData() map[string][]byte {
	return map[string][]byte{
		"storageAccount":  []byte(AzuriteAccount),
		"storageKey":      []byte(AzuriteKey),
		"domain":          []byte(a.Host),
		"emulatorEnabled": []byte("true"),
	}
}

// StandInEndpoint is the blob endpoint of the stand-in account.
func (a *Azurite) StandInEndpoint() string {
	return fmt.Sprintf("http://%s/%s/", a.Host, StandInAccount)
}

// Stop stops Azurite and removes its state.
func (a *Azurite) Stop() {
	if a.cmd != nil && a.cmd.Process != nil {
		_ = a.cmd.Process.Kill()
		_ = a.cmd.Wait()
	}
	_ = os.RemoveAll(a.dir)
}
