package objectstore

import (
	"context"
	"errors"
)

// ProbeByListing probes bucket with the first page of a listing of the whole bucket, for stores
// whose listing cannot be asked for fewer entries.
func ProbeByListing(ctx context.Context, s Store, bucket string) error {
	errOnePage := errors.New("one page is enough")
	err := s.ListObjects(ctx, bucket, "", func([]ObjectVersion) error { return errOnePage })
	if errors.Is(err, errOnePage) {
		return nil
	}
	return err
}
