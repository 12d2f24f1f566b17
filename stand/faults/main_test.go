package faults

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// cells is how many runs of the matrix may go at once. Most of a run waits
// (for a bound, for a simulated broker that does not answer), so many fit
// on two cores; go test's own limit, -parallel, is GOMAXPROCS, which would
// run the matrix two cells at a time.
const cells = 24

func TestMain(m *testing.M) {
	flag.Parse()
	if p := flag.Lookup("test.parallel"); p != nil {
		if n, err := strconv.Atoi(p.Value.String()); err == nil && n < cells {
			p.Value.Set(strconv.Itoa(cells)) //nolint:errcheck // a number
		}
	}
	os.Exit(m.Run())
}
