package gardenlet_test

import "testing"

func TestStack(t *testing.T) { requireStack(t) }
