package store

import (
	"strings"
	"testing"
)

// A second instance on the same local store is told so, with what to do.
func TestOneStoreOneInstance(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "in use by another instance") || !strings.Contains(err.Error(), "-dir") {
		t.Fatalf("a second Open of %s: %v; want it in use, with the -dir to give", dir, err)
	}
}
