package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-orders", "0"}, {"-orders", "100001"}} {
		brewtest.BadFlag(t, "../repartition", args...)
	}
}

// make repartition: the program prints the topics' partition counts, the
// join's counts and that they equal the batch recount, as the README shows,
// and exits 0.
func TestRepartitionReadme(t *testing.T) {
	env := brewtest.Cluster(t)
	bin := brewtest.BuildCmd(t)
	out, stderr, code := brewtest.RunCmd(t, bin, env.Config.Bootstrap())
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	brewtest.MatchesReadme(t, "../../README.md", "repartition", out)
	for _, want := range []string{
		`(?m)^brew\.stream\.join-orders\.\d+ +6 +shop +1200$`,
		`(?m)^brew\.stream\.join-payments\.\d+ +4 +payment id +\d+$`,
		`(?m)^brew\.stream\.join-payments-by-shop-repartition\.\d+ +6 +shop +\d+$`,
		`(?m)^matched +\d+ +payments joined`,
		`(?m)^ord-\d{7} +shop-\d\d .* pay-\d{7} +\d+\.\d s$`,
		`(?m)^equal to the batch recount: yes$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("stderr: %s", stderr)
	}
}
