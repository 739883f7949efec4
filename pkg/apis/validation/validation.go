// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package validation holds the checks every provider makes of its inputs the same way: URLs in
// credentials secrets (named by their key, never shown) and the pieces of bucket naming rules the
// stores share.
package validation

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// URL checks that raw, the value of the secret key key, is an http:// or https:// URL with a
// host, a valid port, no user or password (userHint says where credentials belong instead), no
// query and no fragment. example shows the expected form. The value is never shown: a URL may
// hold credentials.
func URL(key, raw, example, userHint string) error {
	bad := func(why string) error {
		return objectstore.Invalidf("secret key %q %s (its value is not shown, as it may hold credentials)", key, why)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("is not a URL such as " + example + " (a scheme is required; no spaces or newlines)")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("must be an http:// or https:// URL such as " + example)
	case u.Host == "" || u.Hostname() == "":
		return bad("has no host")
	case u.User != nil:
		return bad("must not hold a user or password: " + userHint)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return bad("must not have a query or a fragment")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("has a port outside 1-65535")
		}
	}
	return nil
}

// LowerAlnum reports whether c is a lowercase ASCII letter or a digit.
func LowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// IPv4Like reports a name formatted as an IPv4 address: four dot-separated groups of 1-3 digits,
// which bucket names must not be.
func IPv4Like(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
