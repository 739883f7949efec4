// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// statusClasses are Swift's and Keystone's classes of HTTP statuses (of whole requests and of
// bulk-delete entries) besides those every store shares (see objectstore.ClassOfStatus): their
// errors carry nothing but the status.
var statusClasses = map[int]error{
	http.StatusUnauthorized:          objectstore.ErrUnauthenticated,
	498:                              objectstore.ErrThrottled, // Swift's ratelimit middleware
	http.StatusRequestEntityTooLarge: objectstore.ErrInvalidConfig,
}

// classify wraps a gophercloud error with the sentinel of its status code.
func classify(err error) error {
	return objectstore.Classify(err, func(err error) error {
		var code gophercloud.ErrUnexpectedResponseCode
		if errors.As(err, &code) {
			return objectstore.ClassOfStatus(code.Actual, statusClasses)
		}
		return nil
	})
}

// classifyStatus classifies a status line such as "404 Not Found".
func classifyStatus(status string) error {
	return objectstore.Classify(errors.New(status), func(error) error {
		code, err := strconv.Atoi(strings.SplitN(status, " ", 2)[0])
		if err != nil {
			return nil //nolint:nilerr // no status code: nothing to classify, the error stays as it is
		}
		return objectstore.ClassOfStatus(code, statusClasses)
	})
}

// classifyAuthentication classifies Keystone's refusal of an authentication: it answers 404 for
// an application credential it does not know (a revoked one).
func classifyAuthentication(err error) error {
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return fmt.Errorf("%w: %w", objectstore.ErrUnauthenticated, err)
	}
	return classify(err)
}
