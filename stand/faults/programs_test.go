package faults

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// build links every program of the matrix with one go install: go install
// relinks only a program whose code changed since the last run, and one go
// command hashes the packages they share once. A go run or go build a
// program, the way brewtest.BuildCmdAt does for a lecture's test, costs the
// matrix 30 CPU-seconds for its 88 programs even when nothing changed
// (measured here: 19 s of wall time, most of the package's run in make
// test); go install takes about 1. The binaries (about 1 GB) stay in the
// user's cache folder, one folder per checkout, so that a fresh clone at the
// same path (CI's) finds them too: linking all 88 costs 80 CPU-seconds.
// Two programs of one name cannot share a folder, so the k-th program of a
// name goes to k/. A lock on the folder keeps two test runs from installing
// at once; it is not held while the matrix runs the programs, so a run that
// relinks a changed program can still write under another run using it.
func build(t *testing.T, root string) map[string]string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(root, ".stand")
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "brew-course", "faults-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("locking %s: %v", dir, err)
	}
	seen := map[string]int{}
	groups := map[int][]string{}
	bins := map[string]string{}
	for _, p := range programs {
		name := filepath.Base(p.dir)
		seen[name]++
		k := seen[name]
		groups[k] = append(groups[k], "./"+p.dir)
		bins[p.dir] = filepath.Join(dir, strconv.Itoa(k), name)
	}
	for k := 1; k <= len(groups); k++ {
		cmd := exec.Command("go", append([]string{"install", "-ldflags=-s -w"}, groups[k]...)...)
		cmd.Dir = root
		// The same flags whoever runs it: a binary linked with other flags
		// is linked anew. -trimpath as the tiers' GOFLAGS (scripts/test)
		// has it, so that the packages compile once for the tests and the
		// matrix (without it, a run from empty caches compiled every
		// program's packages a second time: 124 s of the real tier).
		cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(dir, strconv.Itoa(k)), "GOFLAGS=-trimpath")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go install the matrix's programs (%s): %v\n%s", fmt.Sprint(groups[k]), err, out)
		}
	}
	return bins
}
