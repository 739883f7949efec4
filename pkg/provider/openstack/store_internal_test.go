// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestBulkErrors(t *testing.T) {
	cases := []struct {
		name      string
		sent      int
		resp      objects.BulkDeleteResponse
		wantKeys  []string
		wantClass []error
		wantErr   error // a whole-request failure
	}{
		{name: "all deleted", sent: 3, resp: objects.BulkDeleteResponse{ResponseStatus: "200 OK", NumberDeleted: 2, NumberNotFound: 1}},
		{name: "stopped early: unaccounted names are not taken as deleted", sent: 5,
			resp: objects.BulkDeleteResponse{ResponseStatus: "400 Bad Request", ResponseBody: "Max delete failures exceeded", NumberDeleted: 1,
				Errors: [][]string{{"/bench/a", "409 Conflict"}}},
			wantErr: errAny},
		{name: "per-object failures are classified and names decoded", sent: 4,
			resp: objects.BulkDeleteResponse{ResponseStatus: "400 Bad Request", Errors: [][]string{
				{"/bench/shoot--a--b--1/etcd-main/v2/Full%20one", "403 Forbidden"},
				{"/bench/shoot--a--b--1/x", "401 Unauthorized"},
				{"/bench/shoot--a--b--1/y", "503 Service Unavailable"},
				{"/bench/shoot--a--b--1/z", "404 Not Found"},
			}},
			wantKeys:  []string{"shoot--a--b--1/etcd-main/v2/Full one", "shoot--a--b--1/x", "shoot--a--b--1/y", "shoot--a--b--1/z"},
			wantClass: []error{objectstore.ErrForbidden, objectstore.ErrUnauthenticated, objectstore.ErrThrottled, objectstore.ErrNotFound}},
		{name: "whole request refused", resp: objects.BulkDeleteResponse{ResponseStatus: "413 Request Entity Too Large", ResponseBody: "Maximum Bulk Deletes: 10000 per request"},
			wantErr: objectstore.ErrInvalidConfig},
		{name: "whole request throttled", resp: objects.BulkDeleteResponse{ResponseStatus: "498 Rate Limited"}, wantErr: objectstore.ErrThrottled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, err := bulkErrors("bench", c.sent, &c.resp)
			if c.wantErr != nil {
				if err == nil || (c.wantErr != errAny && !errors.Is(err, c.wantErr)) {
					t.Fatalf("got %v; want %v", err, c.wantErr)
				}
				return
			}
			if err != nil || len(errs) != len(c.wantKeys) {
				t.Fatalf("got %v, %v; want %d per-object errors", errs, err, len(c.wantKeys))
			}
			for i, oe := range errs {
				if oe.Object.Key != c.wantKeys[i] || !errors.Is(oe.Err, c.wantClass[i]) {
					t.Errorf("entry %d: %q %v; want %q %v", i, oe.Object.Key, oe.Err, c.wantKeys[i], c.wantClass[i])
				}
			}
		})
	}
}

// errAny stands for "any whole-request error".
var errAny = errors.New("any error")
