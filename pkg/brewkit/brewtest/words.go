package brewtest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var duration = regexp.MustCompile(`(\d+(\.\d+)?(ms|µs|ns|h|m|s))+`)

// blankDurations blanks Go durations (1.5s, 198ms, 1m2s): the kind "durations" of
// a README block's vary clause.
func blankDurations(s string) string { return duration.ReplaceAllString(s, "DURATION") }

// WithoutSimNote drops the lines a program adds on the simulation, which
// start with "(embedded simulation", so one README block serves the
// simulation and real Kafka.
func WithoutSimNote(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "(embedded simulation") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

var answerRe = regexp.MustCompile(`<!-- answer: (\S+) = (.*?) -->`)

// ReadmeAnswer returns the value of <!-- answer: name = value --> in the
// README at path: an exercise's answer, which the lecture's tests check.
func ReadmeAnswer(t testing.TB, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range answerRe.FindAllStringSubmatch(string(b), -1) {
		if m[1] == name {
			return strings.TrimSpace(m[2])
		}
	}
	t.Fatalf("%s has no <!-- answer: %s = ... -->", path, name)
	return ""
}
