package brewtest

import "testing"

func TestShapePattern(t *testing.T) {
	p := ShapePattern("RaftLeader:  3  (x)\nNODE  HOST\n1     127.0.0.1\n")
	for _, ok := range []string{
		"RaftLeader:  1  (x)\nNODE  HOST\n1     127.0.0.1\n",
		"RaftLeader:  12  (x)\nNODE  HOST\n2    127.0.0.1",
	} {
		if !p.MatchString(ok) {
			t.Errorf("should match:\n%s", ok)
		}
	}
	for _, bad := range []string{
		"RaftLeader:  -1  (x)\nNODE  HOST\n1     127.0.0.1\n",
		"RaftLeader:  1  (y)\nNODE  HOST\n1     127.0.0.1\n",
		"RaftLeader:  1  (x)\nNODE  HOST\n1     127.0.0.1\n4     127.0.0.1\n",
	} {
		if p.MatchString(bad) {
			t.Errorf("should not match:\n%s", bad)
		}
	}
}

func TestDurations(t *testing.T) {
	got := Durations("elected after 198ms, full after 1m2.5s, slowest 1.234s (0 waited over 1s)")
	want := "elected after DURATION, full after DURATION, slowest DURATION (0 waited over DURATION)"
	if got != want {
		t.Fatalf("got %q", got)
	}
}
