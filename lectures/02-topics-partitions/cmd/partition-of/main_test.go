package main

import (
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// make partition-of KEYS="ord-0000001 shop-07", and exercise 1's answer.
func TestOutputMatchesReadme(t *testing.T) {
	bin := brewtest.BuildCmd(t)
	for block, keys := range map[string][]string{
		"partition-of":          {"ord-0000001", "shop-07"},
		"exercise-partition-of": {"ord-0000042"},
	} {
		out, stderr, code := brewtest.RunCmd(t, bin, "", keys...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		brewtest.MatchesReadme(t, "../../README.md", block, out)
	}
	for _, bad := range [][]string{{}, {"-partitions", "0", "k"}} {
		_, stderr, code := brewtest.RunCmd(t, bin, "", bad...)
		if code != 2 {
			t.Fatalf("%q: exit %d, want 2; %s", bad, code, stderr)
		}
	}
}
