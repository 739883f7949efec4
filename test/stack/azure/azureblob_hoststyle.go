// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
)

// AzureBlobDomain is Azure's public blob endpoint domain: an account's blobs are at
// https://<account>.blob.core.windows.net/<container>/<blob>.
const AzureBlobDomain = "blob.core.windows.net"

// HostStyle is a Redirect route for ".blob.core.windows.net": the blob service addressed as on
// Azure, by the account's host name, as a program with a fixed public cloud (provider-azure's
// BlobStorageClient, etcd-backup-restore without an endpoint override) addresses it. The ARM
// stand-in backs every storage account it creates with the stand-in account and lists the stand-in
// account's keys for it (StartARM), so a request for <account>.blob.core.windows.net is checked as
// Azure checks it (Shared Key over "/<account>/<path>", with those keys; 403
// AuthenticationFailed otherwise) and then served on the stand-in account, signed anew with its
// name. Blob Batch is not played host-style (its sub-requests carry their own signatures).
func (b *BlobStandIn) HostStyle() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if i := strings.LastIndexByte(host, ':'); i > 0 {
			host = host[:i]
		}
		account, ok := strings.CutSuffix(host, "."+AzureBlobDomain)
		if !ok || !authorized(r, account, StandInKeys) {
			blobError(w, 403, "AuthenticationFailed", "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.")
			return
		}
		if r.URL.Query().Get("comp") == "batch" {
			blobError(w, 400, "InvalidUri", "the stand-in plays Blob Batch path-style only")
			return
		}
		out := r.Clone(r.Context())
		out.URL.RawPath = "/" + StandInAccount + r.URL.EscapedPath()
		out.URL.Path = "/" + StandInAccount + r.URL.Path
		h := hmac.New(sha256.New, mustKey(StandInKeys[0]))
		_, _ = h.Write([]byte(stringToSign(out, StandInAccount)))
		out.Header.Set("Authorization", "SharedKey "+StandInAccount+":"+base64.StdEncoding.EncodeToString(h.Sum(nil)))
		b.serve(w, out)
	})
}

func mustKey(k string) []byte {
	raw, err := base64.StdEncoding.DecodeString(k)
	if err != nil {
		panic(err) // a constant key
	}
	return raw
}
